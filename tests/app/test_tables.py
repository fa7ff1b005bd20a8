"""ui/tables.py: a page's table is the data grid at a desk and, on a projector, a plain table (st.table) in the
projector's type with each number written as the grid's column format writes it; a long table, a link column or a
selection keeps the grid."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import pandas as pd
import pytest
import streamlit as st
from apptest_helpers import assert_healthy, run_app

from ui.tables import PROJECTOR_ROWS, common_decimals, escaped, kind_of, label_of, written_value

NUMBER = st.column_config.NumberColumn(format="%.3f")


@pytest.mark.parametrize(("value", "config", "words"), [
    (0.66812, NUMBER, "0.668"),
    (0.5333, st.column_config.NumberColumn(format="percent"), "53.33%"),
    (0.4, st.column_config.NumberColumn(format="percent"), "40%"),
    (2.0, st.column_config.NumberColumn(format="%.0f"), "2"),
    (7, None, "7"),
    (0.123456, None, "0.1235"),
    (123456.7, None, "123,457"),
    (float("nan"), NUMBER, ""),
    ("2 × 4", None, "2 × 4"),
    (True, None, "True"),
    (True, st.column_config.CheckboxColumn(), "✓"),
    (False, st.column_config.CheckboxColumn(), ""),
])
def test_a_cell_is_written_as_the_grid_writes_it(value, config, words):
    assert written_value(value, config) == words


def test_a_column_is_named_and_kinded_as_the_grid_does():
    assert label_of("mean", st.column_config.NumberColumn("μ", format="%.3f")) == "μ"
    assert label_of("weight", NUMBER) == "weight" and label_of("x", "shown") == "shown"
    assert kind_of(NUMBER) == "number" and kind_of(None) == "text"
    assert kind_of(st.column_config.LinkColumn("open")) == "link"


def test_attention_as_a_layer_on_a_projector_shows_its_outputs_as_a_plain_table_and_a_grid_at_a_desk():
    projector = run_app({"al_step": "b", "present": "1"}, page="app_pages/attention_layer.py")
    assert_healthy(projector)
    assert not projector.dataframe
    shown = projector.table[0].value
    assert list(shown.columns) == ["red", "green", "blue", "height", "across"] and len(shown) == 5
    desk = run_app({"al_step": "b"}, page="app_pages/attention_layer.py")
    assert_healthy(desk)
    assert not desk.table and len(desk.dataframe[0].value) == 5
    pd.testing.assert_frame_equal(desk.dataframe[0].value, shown)  # the same numbers, only written larger


def test_more_rows_than_a_projector_holds_keep_the_grid():
    at = run_app({"present": "1"}, page="app_pages/find_head.py")  # the ranking of every head of the model
    assert_healthy(at)
    assert [len(grid.value) for grid in at.dataframe] and all(len(g.value) > PROJECTOR_ROWS for g in at.dataframe)


def test_a_plain_tables_words_are_not_read_as_markdown_and_its_numbers_line_up():
    """st.table reads headers and cells as Markdown: the Lecture page's "#" column was an empty level-1 heading. And a
    column of unformatted fractions is written with one number of decimals (9.273, 11.466, 14.000: not 11.47, 14)."""
    assert escaped("#") == "\\#" and escaped("0.668") == "0\\.668" and escaped("$x$ *y*") == "\\$x\\$ \\*y\\*"
    assert common_decimals(pd.Series([9.273, 11.466, 14.0])) == {"type_config": {"type": "number", "format": "%.3f"}}
    assert common_decimals(pd.Series([1.0, 2.0])) is None and common_decimals(pd.Series(["a", "b"])) is None
    at = run_app({"present": "1"}, page="app_pages/lecture.py")
    assert_healthy(at)
    assert "\\#" in list(at.table[0].value.columns)
