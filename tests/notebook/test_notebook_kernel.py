"""notebooks/attnviz_in_a_notebook.ipynb run in a real Jupyter kernel (nbclient, ipykernel's python3 kernelspec of
this environment): every cell runs, each attnviz.show cell outputs the widget, whose state holds the app's heatmap
JavaScript and the document of that run, and save_html writes its file."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import attnviz
from attnviz.components.heatmap import component_js
from attnviz.notebook.content import document_of
from attnviz.notebook.document import MAGIC

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "attnviz_in_a_notebook.ipynb"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The notebook after a real kernel ran it, in a folder of its own (save_html writes there)."""
    folder = tmp_path_factory.mktemp("notebook")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit the notebook with outputs cleared"
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(ROOT) + (os.pathsep + old if old else "")  # the kernel imports attnviz from here
    try:
        NotebookClient(nb, kernel_name="python3", timeout=240, store_widget_state=True,
                       resources={"metadata": {"path": str(folder)}}).execute()
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old
    return nb, folder


def widget_views(nb) -> list[str]:
    """The model ids of the widgets the cells output, in order."""
    return [o["data"][WIDGET_VIEW]["model_id"] for c in nb.cells if c.cell_type == "code" for o in c.outputs
            if o.get("output_type") == "execute_result" and WIDGET_VIEW in o.get("data", {})]


def test_every_cell_runs_and_each_show_outputs_the_widget(executed):
    nb, _ = executed
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.get("output_type") == "error"]
    assert errors == []
    shows = [c for c in nb.cells if c.cell_type == "code" and "attnviz.show(" in c.source]
    assert len(shows) == 6 and len(widget_views(nb)) == 6  # transformers' output and bertviz's names among them


def test_the_widgets_state_holds_the_apps_heatmap_js_and_a_document(executed):
    nb, _ = executed
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    for model_id in widget_views(nb):
        widget = state[model_id]
        assert widget["model_name"] == "AnyModel"
        assert widget["state"]["_esm"] == component_js("anywidget")  # the app's drawing code, one source
        assert widget["state"].get("selection") is None
        buffers = {"/".join(b["path"]): b for b in widget.get("buffers", [])}
        assert "document" in buffers  # the bytes travel as a binary buffer

        assert base64.b64decode(buffers["document"]["data"])[:4] == MAGIC


def test_save_html_wrote_its_file_from_the_kernel(executed):
    _, folder = executed
    page = (folder / "attention.html").read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and component_js("page") in page
    assert "http://" not in page.replace("http://www.w3.org", "") and "https://" not in page


def test_show_outside_a_kernel_gives_a_widget_with_the_same_document_as_save_html(minilm, tmp_path):
    res = minilm.run("A short sentence.", keep=True)
    widget = attnviz.show(res, layer=1, heads=[0, 2])
    assert widget.document == document_of(res, layer=1, heads=[0, 2])
