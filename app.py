"""attnviz: run `streamlit run app.py`. Navigation over app_pages/ (each page draws the shared sidebar itself).

Page scripts live in app_pages/, a folder Streamlit does not auto-discover (a folder named pages/ would put a fresh
server in its legacy multipage mode). Each page keeps its old URL path (url_path=): shared links and lecture
plans rely on them.

`streamlit run app.py` serves the `app` at this file's end (Streamlit's st.App, which its command finds in the source):
it imports this file once, as the module `app`, and starts warming the default model before anyone opens a page
(ui/at_start.py). Each page view runs the file again as a script, `__main__`: main() draws the page.
"""

from pathlib import Path

import streamlit as st
import torch

import ui.first_imports  # noqa: F401 - first: a fresh server's sessions load the app's modules one at a time
from attnviz.engine.device import server_threads
from ui.access import settings_problems
from ui.accessibility import page_aids
from ui.across_pages import restore_on_a_new_page
from ui.address import write_bound_values_the_address_lacks
from ui.at_start import warm_from_the_start
from ui.collector import freeze_what_is_loaded
from ui.menu import remember_menu
from ui.present import presenting
from ui.server_stats import start_writing as write_stats_where_asked
from ui.short_links import open_short_link
from ui.streamlit_private import check_at_start, note_refused_link_values
from ui.warm import start_warming

ICON = Path(__file__).parent / "assets" / "favicon.png"


def main() -> None:
    """One page view: the checks and settings every page needs, the menu, the page the address names."""
    check_at_start()  # every piece of Streamlit's private API the app uses is there; the log names a missing one
    note_refused_link_values()  # before any control reads the link: what it drops is said (ui/address.py)
    write_stats_where_asked()  # what this process holds, for a benchmark that asks (ui/server_stats.py); else nothing
    threads = server_threads()  # the browser and the other sessions share the cores
    if torch.get_num_threads() != threads:  # set once per server; later runs find it done
        torch.set_num_threads(threads)
    start_warming()  # the default model, its truth check and the Explorer's first run, once, in a thread (ui/warm.py)

    # The icon is a file served by the app itself: a ":material/…" page icon makes the browser fetch it from an
    # outside font host (no network in some lecture halls; and it tells a third party who opened the page). Set
    # before st.navigation: after it, the page's own menu icon (a :material/ one) would be the tab's icon.
    st.set_page_config(page_title="attnviz: attention, explained", page_icon=str(ICON), layout="wide")

    # The menu in teaching order, in sections a lecturer can follow through an hour. It sits in the header (position="top":
    # the page's own controls stay on the first screen; a phone shows it in the sidebar), each section a menu. Short
    # section names: every section shows at 1366 px with the sidebar open and at 1024 px in presentation mode, where
    # Streamlit folds those that do not fit under "N more".
    PAGES = {
        "Basics": [
            st.Page("app_pages/transformer_map.py", url_path="transformer_map",
                    title="The Transformer map", icon=":material/account_tree:"),
            st.Page("app_pages/why_attention.py", url_path="why_attention",
                    title="Why attention", icon=":material/lightbulb:"),
            st.Page("app_pages/attention_layer.py", url_path="attention_layer",
                    title="Attention as a layer", icon=":material/image:"),
            st.Page("app_pages/explorer.py", title="Explorer", icon=":material/search:", default=True),
            st.Page("app_pages/step_by_step.py", url_path="step_by_step",
                    title="Step by step", icon=":material/stairs:"),
            st.Page("app_pages/multihead.py", url_path="multihead_anatomy",
                    title="Multi-head anatomy", icon=":material/view_column:"),
            st.Page("app_pages/encoder_layer.py", url_path="encoder_layer",
                    title="The encoder layer", icon=":material/layers:"),
            st.Page("app_pages/decoder_block.py", url_path="decoder_block",
                    title="The decoder block", icon=":material/stacks:"),
        ],
        "Design": [
            st.Page("app_pages/scaling.py", url_path="scaling_lab",
                    title="Scaling lab", icon=":material/straighten:"),
            st.Page("app_pages/positions.py", url_path="positions",
                    title="Positions", icon=":material/format_list_numbered:"),
            st.Page("app_pages/additive.py", url_path="additive_attention",
                    title="Additive vs dot-product", icon=":material/functions:"),
            st.Page("app_pages/masks.py", url_path="masks_lab",
                    title="Masks lab", icon=":material/grid_on:"),
            st.Page("app_pages/efficient.py", url_path="efficient_attention",
                    title="Efficient attention", icon=":material/speed:"),
        ],
        "Decoders": [
            st.Page("app_pages/cross_attention.py", url_path="cross_attention",
                    title="Cross-attention", icon=":material/translate:"),
            st.Page("app_pages/kv_cache.py", url_path="kv_cache",
                    title="KV cache", icon=":material/memory:"),
            st.Page("app_pages/induction.py", url_path="induction_heads",
                    title="Induction heads", icon=":material/content_copy:"),
        ],
        "Look closer": [
            st.Page("app_pages/compare.py", url_path="compare",
                    title="Compare", icon=":material/compare:"),
            st.Page("app_pages/model_view.py", url_path="model_view",
                    title="Model view", icon=":material/apps:"),
            st.Page("app_pages/find_head.py", url_path="find_head",
                    title="Find the head", icon=":material/person_search:"),
            st.Page("app_pages/qk_space.py", url_path="qk_space",
                    title="Query–key space", icon=":material/scatter_plot:"),
            st.Page("app_pages/head_claims.py", url_path="head_claims",
                    title="Head claims", icon=":material/fact_check:"),
        ],
        "Lecture": [
            st.Page("app_pages/lecture.py", url_path="lecture",
                    title="Lecture plan", icon=":material/co_present:"),
            st.Page("app_pages/lecture_notes.py", url_path="lecture_notes",
                    title="Presenter notes", icon=":material/speaker_notes:"),
            st.Page("app_pages/follow.py", url_path="follow",
                    title="Follow the lecture", icon=":material/groups:"),
        ],
    }
    remember_menu(PAGES)  # the pages a lecture plan may name (ui/menu.py)
    open_short_link()  # ?v=<id>: the view's whole query from the store, before any page reads it (ui/short_links.py)
    navigation = st.navigation(PAGES, position="top", expanded=True)  # a phone's sidebar menu: every page, no "View more"
    # before presentation mode decides the sidebar: a page switch keeps every setting (ui/across_pages.py)
    restore_on_a_new_page(navigation.url_path)
    st.set_page_config(initial_sidebar_state="collapsed" if presenting() else "auto")
    page_aids(navigation.title)  # its own document title, focus rings that show, motion only if wanted (ui/accessibility.py)
    for problem in settings_problems():  # the lecturer sees a wrong setting where they prepare; defaults are in use
        st.sidebar.warning(f"Server settings: {problem}", icon=":material/settings:")
    # Every page draws the shared sidebar itself: `view = ui.open_page(...)` (see ui/page.py).
    navigation.run()
    write_bound_values_the_address_lacks()  # the address says what the drawn controls say (ui/address.py)
    freeze_what_is_loaded()  # once the process's first page is drawn: the garbage collector skips what is loaded


if __name__ == "__main__":  # a page view (Streamlit runs the file as __main__; so does AppTest)
    main()
else:  # `streamlit run app.py` imported it to serve `app`
    app = st.App(__file__, lifespan=warm_from_the_start)
