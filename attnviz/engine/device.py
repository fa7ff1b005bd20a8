"""Which device the engine computes on: cuda when present, then Apple's mps, else the CPU."""

from __future__ import annotations

import os

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


THREADS_VARIABLE = "ATTNVIZ_TORCH_THREADS"


def server_threads(cores: int | None = None, setting: str | None = None) -> int:
    """How many CPU threads torch's operations may use in the app's server: half the cores, at least one,
    unless ATTNVIZ_TORCH_THREADS (or `setting`) names a whole number of at least 1.

    The server never has the machine to itself: on a lecturer's laptop the browser that draws the pages
    runs beside it, and in a class every session runs its own model in its own thread. A run that claims
    every core spins waiting for cores those others hold (on a 2-core machine serving its own browser,
    2 threads cost 1.5× the server CPU of 1 and made pages slower, not faster: see benchmarks/RESULTS.md).
    """
    setting = os.environ.get(THREADS_VARIABLE) if setting is None else setting
    if setting is not None and setting.strip().isdigit() and int(setting) >= 1:
        return int(setting)
    return max(1, (cores if cores is not None else os.cpu_count() or 1) // 2)
