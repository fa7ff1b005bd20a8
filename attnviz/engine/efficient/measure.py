"""Measuring what an attention function costs: wall time, and the peak bytes of the tensors it allocates.

Why not tracemalloc or RSS: tracemalloc does not see torch's allocations at all, and the process's
resident size moves with the allocator's caching and with whatever else the process (a Streamlit
server) is doing. Instead we watch every tensor operation the function runs (a TorchDispatchMode):
each op's newly allocated outputs (not views, not in-place results) join a live set, and leave it when
their storage is freed. The peak of the live total is the function's peak tensor memory: the largest
set of intermediates it ever holds at once (the inputs, allocated before, are not counted). What this
does not see is scratch memory an op uses inside itself (e.g. a matmul's packing buffers), which is
small next to the intermediates it compares.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import contextmanager

import torch
from torch.multiprocessing.reductions import StorageWeakRef
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


class _LiveTensorBytes(TorchDispatchMode):
    """Tracks the bytes of tensor storages allocated by ops while active; `peak` is the most held at once."""

    def __init__(self):
        super().__init__()
        self.live: dict[int, tuple[StorageWeakRef, int]] = {}  # data_ptr -> (weak ref to the storage, bytes)
        self.current = 0
        self.peak = 0

    def _sweep(self) -> None:
        for ptr in [p for p, (ref, _) in self.live.items() if ref.expired()]:
            self.current -= self.live.pop(ptr)[1]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self._sweep()  # storages freed since the previous op leave first: their bytes are back
        returns = func._schema.returns
        for i, t in enumerate(tree_flatten(out)[0]):
            if not isinstance(t, torch.Tensor):
                continue
            aliased = i < len(returns) and returns[i].alias_info is not None  # a view or an in-place result
            storage = t.untyped_storage()
            ptr = storage.data_ptr()
            if aliased or ptr in self.live or storage.nbytes() == 0:
                continue
            self.live[ptr] = (StorageWeakRef(storage), storage.nbytes())
            self.current += storage.nbytes()
        self.peak = max(self.peak, self.current)
        return out


def peak_tensor_bytes(fn: Callable[[], object]) -> int:
    """The most bytes of tensors `fn` holds at once while it runs, its result included (see the module doc)."""
    with torch.no_grad(), _LiveTensorBytes() as tracker:
        result = fn()
        del result
    return tracker.peak


@contextmanager
def torch_threads(n: int):
    """torch's intra-op thread count set to n inside the block, restored after."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def seconds(fn: Callable[[], object], repeats: int = 3, budget: float = 2.0, threads: int | None = 1) -> float:
    """The fastest wall time of fn over up to `repeats` runs after one warm-up run (fewer runs once they have
    taken `budget` seconds). The fastest, not the mean: on a shared machine the slow runs measure the neighbours.

    threads=1 (default) times on one thread: on a busy CPU an op split over 2 threads waits until both are
    scheduled, and a method made of many small ops (tiles, bands) then measures the neighbours' load, not
    itself (we saw the tiled kernel go from 0.5 s to 26 s that way). None keeps torch's own setting.
    """
    times = []
    with torch.no_grad(), torch_threads(threads or torch.get_num_threads()):
        fn()  # warm-up: first-call costs (allocator, kernel selection) are not the algorithm's
        for _ in range(max(repeats, 1)):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
            if sum(times) > budget:
                break
    return min(times)
