"""axe-core (the npm package, installed by tests/install_browser.sh) run inside a page of a real Chromium: the WCAG 2.0
and 2.1 rules of levels A and AA, each violation matched against the faults the accessibility statement lists
(docs/accessibility_faults.toml: Streamlit's own, each with its upstream issue). Anything else is attnviz's to fix.

axe is put into a page once per page load (inject): a switch through the app's menu keeps it, a lecture step's
link (a page load) needs it again.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass

from streamlit_servers import ROOT

AXE_VERSION = "4.14.1"  # the version tests/install_browser.sh installs: a new axe brings new rules, on purpose only
AXE_PACKAGE = ROOT / ".node" / "node_modules" / "axe-core"
WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]  # axe's tags for WCAG 2.0 and 2.1, levels A and AA
FAULTS = ROOT / "docs" / "accessibility_faults.toml"


@dataclass(frozen=True)
class Fault:
    """A fault the statement lists: axe's rule, where it is (a CSS selector the failing element is, or is inside),
    what it is, and the upstream issue."""

    rule: str
    where: str
    what: str
    upstream: str


def known_faults() -> list[Fault]:
    return [Fault(**f) for f in tomllib.loads(FAULTS.read_text(encoding="utf-8")).get("fault", [])]


def axe_source() -> str:
    """axe.min.js of the pinned version; a clear failure (not a skip) when it is missing or another version."""
    script, package = AXE_PACKAGE / "axe.min.js", AXE_PACKAGE / "package.json"
    assert script.exists(), f"axe-core is not installed at {AXE_PACKAGE}: run tests/install_browser.sh"
    version = json.loads(package.read_text(encoding="utf-8"))["version"]
    assert version == AXE_VERSION, f"axe-core {version} is installed, the tests pin {AXE_VERSION}: run tests/install_browser.sh"
    return script.read_text(encoding="utf-8")


def inject(page) -> None:
    """axe into the page, unless this page load already has it."""
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(content=axe_source())


# JS: axe's WCAG A/AA violations, one row per failing element, each with the statement's fault it matches (its
# upstream issue) or null. A target is a list of selectors, one per shadow root on the way (axe's own form).
RUN = """async ([tags, faults]) => {
  const found = (target) => {
    let root = document, el = null;
    for (const part of target) {
      const sel = Array.isArray(part) ? part : [part];
      for (const s of sel) { el = root.querySelector(s); if (!el) return null; root = el.shadowRoot || el; }
    }
    return el;
  };
  const result = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
  const rows = [];
  for (const v of result.violations) for (const n of v.nodes) {
    const el = found(n.target);
    const fault = faults.find(f => f.rule === v.id && el && el.closest && el.closest(f.where));
    rows.push({rule: v.id, impact: n.impact, target: JSON.stringify(n.target).slice(0, 160),
               html: (n.html || '').slice(0, 160), why: (n.failureSummary || '').replace(/\\s+/g, ' ').slice(0, 220),
               fault: fault ? fault.upstream : null});
  }
  return rows;
}"""


@dataclass
class AxeLog:
    """What a walk met: the violations no fault matches (rule, where, element, why), and the listed faults seen."""

    problems: list[tuple[str, str, str, str]]
    seen: dict[str, int]  # upstream issue -> elements that matched it

    def __init__(self):
        self.problems, self.seen = [], {}

    def check(self, page, where: str) -> None:
        """axe over the page as it is now; unlisted violations kept with `where` (page, state, size)."""
        inject(page)
        faults = [{"rule": f.rule, "where": f.where, "upstream": f.upstream} for f in known_faults()]
        for row in page.evaluate(RUN, [WCAG_AA, faults]):
            if row["fault"]:
                self.seen[row["fault"]] = self.seen.get(row["fault"], 0) + 1
            else:
                self.problems.append((row["rule"], where, f"{row['target']} {row['html']}", row["why"]))

    def per_rule(self) -> dict[str, int]:
        """The unlisted violations (failing elements) counted per axe rule."""
        counts: dict[str, int] = {}
        for rule, *_ in self.problems:
            counts[rule] = counts.get(rule, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: -kv[1]))

    def report(self, examples: int = 3) -> str:
        """Per rule: how many elements, where, and a few of them with axe's reason."""
        lines = [f"{len(self.problems)} WCAG 2.1 A/AA violations the statement does not list:"]
        for rule, count in self.per_rule().items():
            rows = [p for p in self.problems if p[0] == rule]
            places = sorted({where for _, where, _, _ in rows})
            lines.append(f"- {rule}: {count} elements, in {len(places)} views: {', '.join(places[:8])}"
                         + (" ..." if len(places) > 8 else ""))
            lines += [f"    {where}: {element} -- {why}" for _, where, element, why in rows[:examples]]
        return "\n".join(lines)

