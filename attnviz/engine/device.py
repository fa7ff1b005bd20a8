"""Which device the engine computes on: cuda when present, then Apple's mps, else the CPU."""

from __future__ import annotations

import torch

from attnviz.errors import AttnvizError


def available_devices() -> list[str]:
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.insert(0, "cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        devices.insert(0 if "cuda" not in devices else 1, "mps")
    return devices


def pick_device(requested: str | None = None) -> str:
    """The requested device if it is there, else the best available one (cuda > mps > cpu)."""
    devices = available_devices()
    if requested in (None, "", "auto"):
        return devices[0]
    if requested not in devices:
        raise AttnvizError(f"Device '{requested}' is not available here; available: {', '.join(devices)}.")
    return requested
