"""Where the suite's time goes: each test file's summed seconds (setup, call and teardown of its tests, as the
workers report them), slowest first, printed at the end of every run (tests/conftest.py's terminal summary), so CI's
output says which files to make cheaper. With workers the sums add up to more than the run's wall time."""

from collections import defaultdict

SHOWN = 25  # the slowest files named one by one; the rest summed in one line


def seconds_by_file(reports) -> dict[str, float]:
    """file path -> the summed duration of every phase of its tests' reports."""
    total: dict[str, float] = defaultdict(float)
    for report in reports:
        if getattr(report, "nodeid", "") and hasattr(report, "duration"):
            total[report.nodeid.split("::", 1)[0]] += report.duration
    return dict(total)


def file_times_lines(reports) -> list[str]:
    """The table's lines, slowest first: seconds, share of the sum, file."""
    times = sorted(seconds_by_file(reports).items(), key=lambda kv: -kv[1])
    whole = sum(t for _, t in times) or 1.0
    lines = [f"{t:8.1f} s {100 * t / whole:5.1f} %  {path}" for path, t in times[:SHOWN]]
    rest = times[SHOWN:]
    if rest:
        lines.append(f"{sum(t for _, t in rest):8.1f} s {100 * sum(t for _, t in rest) / whole:5.1f} %  "
                     f"the other {len(rest)} files")
    lines.append(f"{whole:8.1f} s in all, over {len(times)} files")
    return lines
