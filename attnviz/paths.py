"""Where attnviz's package data lives: one place for every reader, so the files travel inside the installed package.

    attnviz/assets/models/     the models attnviz trains and ships (tiny-llama, tiny-bart, the two GRUs)
    attnviz/assets/lectures/   the lecture plans (attention.toml is the default)
    attnviz/assets/pictures/   scene.png, the picture of the attention-as-a-layer lesson
    attnviz/assets/corpora/    text corpora the lessons read
"""

from __future__ import annotations

from pathlib import Path

ASSETS = Path(__file__).resolve().parent / "assets"
MODELS = ASSETS / "models"
LECTURES = ASSETS / "lectures"
PICTURES = ASSETS / "pictures"
CORPORA = ASSETS / "corpora"
