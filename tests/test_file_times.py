"""The per-file time table CI prints (tests/file_times.py)."""

from types import SimpleNamespace

from file_times import file_times_lines, seconds_by_file


def report(nodeid: str, duration: float, when: str = "call"):
    return SimpleNamespace(nodeid=nodeid, duration=duration, when=when)


def test_a_files_phases_sum_and_the_slowest_file_comes_first():
    reports = [report("tests/a.py::t1", 1.0, "setup"), report("tests/a.py::t1", 2.0), report("tests/b.py::t", 5.0),
               report("tests/a.py::t2[x::y]", 0.5, "teardown")]
    assert seconds_by_file(reports) == {"tests/a.py": 3.5, "tests/b.py": 5.0}
    lines = file_times_lines(reports)
    assert lines[0].endswith("tests/b.py") and lines[1].endswith("tests/a.py")
    assert "8.5 s in all, over 2 files" in lines[-1]
