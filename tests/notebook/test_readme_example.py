"""The notebook example in docs/library.md is the example notebook's cells tagged "readme", word for word: the notebook
is what tests/notebook/test_notebook_kernel.py runs in a real kernel, so the documentation shows code that ran."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_documented_block_is_the_notebooks_readme_cells():
    nb = json.loads((ROOT / "notebooks" / "attnviz_in_a_notebook.ipynb").read_text(encoding="utf-8"))
    tagged = ["".join(c["source"]) for c in nb["cells"]
              if c["cell_type"] == "code" and "readme" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) >= 5 and any("attn_implementation=\"eager\"" in t for t in tagged)
    guide = (ROOT / "docs" / "library.md").read_text(encoding="utf-8")
    section = guide[guide.index("## In a notebook"):]
    assert "```python\n" + "\n\n".join(tagged) + "\n```" in section
