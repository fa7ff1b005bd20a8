"""The picture the attention-as-a-layer page attends over: a simple scene drawn here, from code, with a seed.

Sky (lighter towards the horizon), a yellow sun high on the right, green grass, a blue lake on the right, a red
house with a brown roof on the left and a tree: regions a hand-written query can tell apart by colour and height.
A seeded speckle of ±6 levels keeps the regions from being perfectly flat. Nothing is downloaded or photographed.

Run `python -m attnviz.lessons.attention_layer.scene` to write attnviz/assets/pictures/scene.png again; a test checks that
this code reproduces the shipped picture pixel for pixel.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from attnviz.paths import PICTURES

PICTURE_PATH = PICTURES / "scene.png"
WIDTH, HEIGHT = 256, 192  # pixels
SEED = 0
HORIZON = 104  # the first pixel row below the sky


def draw_scene(seed: int = SEED) -> np.ndarray:
    """The scene as uint8 RGB pixels, (HEIGHT, WIDTH, 3)."""
    img = Image.new("RGB", (WIDTH, HEIGHT))
    draw = ImageDraw.Draw(img)
    for y in range(HORIZON):  # sky: deep blue at the top, paler at the horizon
        t = y / HORIZON
        draw.line([(0, y), (WIDTH, y)], fill=(int(70 + 110 * t), int(130 + 80 * t), int(225 + 20 * t)))
    draw.ellipse([188, 14, 228, 54], fill=(255, 215, 40))  # the sun
    draw.rectangle([0, HORIZON, WIDTH, HEIGHT], fill=(70, 160, 60))  # grass
    draw.ellipse([140, 128, 300, 200], fill=(40, 90, 180))  # the lake, running off the right edge
    draw.rectangle([24, 84, 88, 136], fill=(190, 50, 45))  # the house's walls
    draw.polygon([(16, 86), (56, 56), (96, 86)], fill=(110, 60, 30))  # its roof
    draw.rectangle([48, 108, 62, 136], fill=(70, 40, 20))  # its door
    draw.rectangle([116, 90, 124, 130], fill=(100, 65, 30))  # the tree's trunk
    draw.ellipse([98, 50, 142, 98], fill=(30, 100, 40))  # its crown
    pixels = np.asarray(img, dtype=np.int16)  # (HEIGHT, WIDTH, 3)
    speckle = np.random.default_rng(seed).integers(-6, 7, size=pixels.shape)  # (HEIGHT, WIDTH, 3)
    return np.clip(pixels + speckle, 0, 255).astype(np.uint8)  # (HEIGHT, WIDTH, 3)


def main() -> None:
    PICTURE_PATH.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(draw_scene()).save(PICTURE_PATH, optimize=True)
    print(f"wrote {PICTURE_PATH} ({PICTURE_PATH.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
