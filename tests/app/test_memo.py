"""ui/memo.SharedCache: a value is made once, however many threads ask at once; the oldest goes first."""

import threading
import time

import pytest

from ui.memo import SharedCache, shared
from ui.runs import run_for


def test_a_value_is_made_once_for_threads_asking_together_and_then_served():
    cache, made = SharedCache(max_entries=4), []

    def make():
        made.append(1)
        time.sleep(0.05)  # long enough that every thread below asks while it is being made
        return object()

    got = []
    threads = [threading.Thread(target=lambda: got.append(cache.get("k", make))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 1 and len(got) == 8 and all(g is got[0] for g in got)


def test_the_least_recently_used_entry_is_dropped_first():
    cache = SharedCache(max_entries=2)
    cache.get("a", lambda: 1)
    cache.get("b", lambda: 2)
    cache.get("a", lambda: 0)  # a used again: b is now the oldest
    cache.get("c", lambda: 3)
    assert len(cache) == 2
    assert cache.get("a", lambda: "made again") == 1 and cache.get("b", lambda: "made again") == "made again"


def test_a_failure_keeps_nothing_and_the_next_call_tries_again():
    cache = SharedCache(max_entries=2)
    with pytest.raises(ValueError):
        cache.get("k", lambda: (_ for _ in ()).throw(ValueError("no")))
    assert len(cache) == 0 and cache.get("k", lambda: 5) == 5


def test_keys_tell_the_scale_true_from_the_factor_one():
    """run_for keys on repr(scale): True (1/√d_k) and 1.0 (a factor of one: no scaling) are equal in Python."""
    scaled = run_for("toy", "cpu", "red green blue", "none", True)
    factor_one = run_for("toy", "cpu", "red green blue", "none", 1.0)
    assert scaled.scale != factor_one.scale == 1.0


def test_peek_reads_a_held_value_and_makes_nothing():
    cache = SharedCache(max_entries=2)
    assert cache.peek("k") is None and len(cache) == 0
    cache.get("k", lambda: 7)
    assert cache.peek("k") == 7


def test_a_function_defined_again_keeps_its_cache():
    """A page script defines its cached functions anew on every rerun: the second definition must find the values
    the first made (a cache per definition held a value for one run only)."""
    made = []
    source = "def page_part(x):\n    made.append(x)\n    return x * 2\n"
    results = []
    for _ in range(3):  # three reruns of the same script
        scope = {"made": made}
        exec(compile(source, "/virtual/page_script.py", "exec"), scope)
        results.append(shared(max_entries=4)(scope["page_part"])(21))
    assert results == [42, 42, 42] and made == [21]
    scope = {"made": made}  # the same name in another file is another function
    exec(compile(source, "/virtual/other_page.py", "exec"), scope)
    assert shared(max_entries=4)(scope["page_part"])(21) == 42 and made == [21, 21]
