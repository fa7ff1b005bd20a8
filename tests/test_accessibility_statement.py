"""The accessibility statement (docs/accessibility.md) in the form universities ask for: every WCAG 2.1 success
criterion of levels A and AA, once, marked with one of the four statuses; and every Streamlit fault the axe walk
allows (docs/accessibility_faults.toml) named there with its upstream issue."""

import re

from axe_check import known_faults
from streamlit_servers import ROOT

STATEMENT = (ROOT / "docs" / "accessibility.md").read_text(encoding="utf-8")
STATUSES = {"Supports", "Partially supports", "Does not support", "Not applicable"}
# WCAG 2.1's success criteria of levels A and AA (https://www.w3.org/TR/WCAG21/), by number
A_AND_AA = {
    "1.1.1": "A", "1.2.1": "A", "1.2.2": "A", "1.2.3": "A", "1.2.4": "AA", "1.2.5": "AA", "1.3.1": "A", "1.3.2": "A",
    "1.3.3": "A", "1.3.4": "AA", "1.3.5": "AA", "1.4.1": "A", "1.4.2": "A", "1.4.3": "AA", "1.4.4": "AA", "1.4.5": "AA",
    "1.4.10": "AA", "1.4.11": "AA", "1.4.12": "AA", "1.4.13": "AA", "2.1.1": "A", "2.1.2": "A", "2.1.4": "A",
    "2.2.1": "A", "2.2.2": "A", "2.3.1": "A", "2.4.1": "A", "2.4.2": "A", "2.4.3": "A", "2.4.4": "A", "2.4.5": "AA",
    "2.4.6": "AA", "2.4.7": "AA", "2.5.1": "A", "2.5.2": "A", "2.5.3": "A", "2.5.4": "A", "3.1.1": "A", "3.1.2": "AA",
    "3.2.1": "A", "3.2.2": "A", "3.2.3": "AA", "3.2.4": "AA", "3.3.1": "A", "3.3.2": "A", "3.3.3": "AA", "3.3.4": "AA",
    "4.1.1": "A", "4.1.2": "A", "4.1.3": "AA",
}


def test_every_a_and_aa_criterion_is_stated_once_with_its_level_and_a_status():
    rows = re.findall(r"^\| (\d\.\d+\.\d+) [^|]+\| (A{1,2}) \| ([^|]+?) \|", STATEMENT, flags=re.MULTILINE)
    stated = [number for number, _, _ in rows]
    assert sorted(stated) == sorted(A_AND_AA), (set(A_AND_AA) - set(stated), set(stated) - set(A_AND_AA))
    assert len(stated) == len(set(stated)), "a criterion stated twice"
    wrong = [(n, level, status) for n, level, status in rows if level != A_AND_AA[n] or status not in STATUSES]
    assert not wrong, wrong


def test_every_fault_the_axe_walk_allows_is_in_the_statement_with_its_upstream_issue():
    missing = [f.upstream for f in known_faults() if f.upstream not in STATEMENT]
    assert not missing, f"listed in docs/accessibility_faults.toml but not in docs/accessibility.md: {missing}"
    assert all(re.fullmatch(r"https://github\.com/streamlit/streamlit/issues/\d+", f.upstream) for f in known_faults())
