"""The one way a page shows a table: `table(where, data, **the st.dataframe arguments)`, where = st, a container or a
column.

At a desk it is Streamlit's data grid (st.dataframe: sort, search, download, column widths). On a projector the grid
is the wrong thing: it draws its words on a canvas in the theme's small type (14-16 px on a 1024 px projector, where
the page's own words are 20 px and more), which presentation mode's larger type cannot reach. There a table of up to
PROJECTOR_ROWS rows is drawn as a plain table (st.table) in the projector's type, its numbers written as the grid's
column formats write them ("%.3f", "percent", a tick for a check box), its columns named as the grid names them. A
longer table, one whose column is a link or a bar, or one that takes a selection, stays a grid: a plain table would
lose what it is for (an editor, st.data_editor, is not drawn here).
"""

from __future__ import annotations

import math
import numbers
import re
from functools import partial

import pandas as pd

from ui.present import presenting

PROJECTOR_ROWS = 16
MARKDOWN_SIGNS = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|~$])")
PLAIN_COLUMNS = ("number", "text", "checkbox")  # the grid's column kinds a plain table can write (a tick: "✓")


def table(where, data, **dataframe_args):
    """where.dataframe(data, **dataframe_args) at a desk; on a projector, a plain table of the same words when it
    can be one (see the module's note)."""
    configs = dataframe_args.get("column_config") or {}
    frame = pd.DataFrame(data) if presenting() else None
    if (frame is None or len(frame) > PROJECTOR_ROWS or "on_select" in dataframe_args
            or any(kind_of(config) not in PLAIN_COLUMNS for config in configs.values())):
        return where.dataframe(data, **dataframe_args)
    # the values stay numbers (a number column keeps its right alignment); the Styler writes each cell's words.
    # st.table reads its headers and cells as Markdown ("#" was an empty heading): every word goes in escaped
    configs = {column: configs.get(column) or common_decimals(frame[column]) for column in frame.columns}
    named = frame.rename(columns={column: escaped(label_of(column, configs[column])) for column in frame.columns})
    if not isinstance(frame.index, pd.RangeIndex):
        named.index = [escaped(str(i)) for i in frame.index]
    words = {escaped(label_of(column, configs[column])): partial(written_with, configs[column])
             for column in frame.columns}
    return where.table(named.style.format(words), hide_index=dataframe_args.get("hide_index"))


def common_decimals(values: pd.Series) -> dict | None:
    """A column of fractional numbers with no format of its own: one number of decimals for all (up to 4, as many as
    its most precise value has), so they line up under each other (9.273, 11.466, 14.000, not 9.273, 11.47, 14)."""
    floats = [float(v) for v in values if isinstance(v, numbers.Real) and not isinstance(v, bool | numbers.Integral)
              and not math.isnan(float(v))]
    if not floats or all(v.is_integer() for v in floats):
        return None
    decimals = max(len(f"{v:.4f}".rstrip("0").split(".")[1]) for v in floats)
    return {"type_config": {"type": "number", "format": f"%.{decimals}f"}}


def escaped(text: str) -> str:
    """Words that st.table's Markdown shows as they are (a backslash before each sign Markdown or its math reads)."""
    return MARKDOWN_SIGNS.sub(r"\\\1", text)


def kind_of(config) -> str:
    """A column_config entry's kind ("number", "text", "link", ...); a bare label (a string) is a text column."""
    if config is None or isinstance(config, str):
        return "text"
    return ((config.get("type_config") or {}).get("type")) or "text"


def label_of(column, config) -> str:
    """The column's name as the grid shows it: the config's label, else the column's own."""
    if isinstance(config, str):
        return config
    label = config.get("label") if isinstance(config, dict) else None
    return str(label if label else column)


def written_with(config, value) -> str:
    """written_value with the column's config first, escaped for st.table's Markdown (a Styler's formatter)."""
    return escaped(written_value(value, config))


def written_value(value, config) -> str:
    """A cell's words as the grid writes them: a number by its column's format ("%.3f", "percent"), else plainly."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if kind_of(config) == "checkbox":  # read only: a tick where the grid ticks its box
        return "✓" if value else ""
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        return str(value)
    form = ((config or {}).get("type_config") or {}).get("format") if isinstance(config, dict) else None
    if form == "percent":  # as the grid writes it: 53.33%, 40% (no trailing zeros)
        return f"{value * 100:.2f}".rstrip("0").rstrip(".") + "%"
    if form and form.startswith("%"):
        return form % value
    if isinstance(value, numbers.Integral):
        return str(value)
    return f"{value:,.0f}" if abs(value) >= 1e4 else f"{value:.4g}"
