"""A least-recently-used cache shared by every session of the server, keyed on a tuple of plain values.

For the values a click asks for several times over (a run, a layer's heatmap payload). st.cache_resource and
st.cache_data hash every argument and inspect the function's signature on every call, hit or miss: about 1 ms a
call on this machine, and the explorer made fourteen such calls per rerun. A tuple of strings and numbers is
looked up in microseconds. Like st.cache_resource, a value is made once even when several sessions ask for it
at the same moment (a class opening one shared link), and is shared, not copied: callers must not change it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np


class SharedCache:
    def __init__(self, max_entries: int):
        self.max_entries = max_entries
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._making: dict[Hashable, threading.Lock] = {}  # one lock per key being made: others wait for it
        self._lock = threading.Lock()  # guards the two dicts, never held while a value is made

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """The value for key, made with make() (once, however many threads ask) when it is not held."""
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
            making = self._making.setdefault(key, threading.Lock())
        with making:
            with self._lock:
                if key in self._values:  # made by another thread while this one waited
                    return self._values[key]
            try:
                value = make()
            except BaseException:  # nothing is kept: the next caller tries again
                with self._lock:
                    self._making.pop(key, None)
                raise
            with self._lock:
                self._values[key] = value
                self._making.pop(key, None)
                while len(self._values) > self.max_entries:
                    self._values.popitem(last=False)
        return value

    def drop(self, which: Callable[[Hashable], bool]) -> int:
        """Let go of every value whose key `which` picks (a lecture room's, once nobody follows it): how many."""
        with self._lock:
            gone = [key for key in self._values if which(key)]
            for key in gone:
                del self._values[key]
        return len(gone)

    def peek_unlocked(self, key: Hashable) -> Any | None:
        """The value for key if it is held now, else None, read without the lock (one dict read) and without making it
        the most recently used: for a value that many threads read at the same moment."""
        return self._values.get(key)

    def peek(self, key: Hashable) -> Any | None:
        """The value for key if it is held now, else None (nothing is made)."""
        with self._lock:
            return self._values.get(key)

    def __len__(self) -> int:
        return len(self._values)


def shared(max_entries: int):
    """A function's results in a SharedCache keyed on its arguments (plain, hashable values): the one cache style
    of the Streamlit layer, for models, runs and every page's own computations alike."""

    def wrap(function: Callable):
        cache = cache_of(function, max_entries)

        def cached(*args):
            return cache.get(tuple(_key_of(a) for a in args), lambda: function(*args))

        cached.cache = cache
        cached.__doc__, cached.__name__ = function.__doc__, function.__name__
        return cached

    return wrap


_CACHES: dict[tuple, SharedCache] = {}
_CACHES_LOCK = threading.Lock()


def cache_of(function: Callable, max_entries: int) -> SharedCache:
    """The one cache of this function, found again when its definition runs again. A page script runs anew on every
    rerun and defines its functions anew each time: a cache made per definition would hold a value for one run only.
    Keyed by where the function is written and its compiled code, so an edited function starts afresh."""
    where = (function.__code__.co_filename, function.__qualname__, _code_key(function.__code__))
    with _CACHES_LOCK:
        return _CACHES.setdefault(where, SharedCache(max_entries))


def _code_key(code) -> tuple:
    """A compiled function's instructions and constants, nested functions' included (their repr holds an address)."""
    consts = tuple(_code_key(c) if hasattr(c, "co_code") else repr(c) for c in code.co_consts)
    return code.co_code, consts


def _key_of(value) -> Hashable:
    """An argument as part of a key: with its type (True and 1.0 are equal keys to a dict, but not the same
    scale), and an array by its contents (a page's queries and keys)."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):  # a numpy array or a torch tensor

        array = np.asarray(value.detach().cpu() if hasattr(value, "detach") else value)
        return type(value), array.shape, array.dtype.str, array.tobytes()
    return type(value), value
