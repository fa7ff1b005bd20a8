"""After every run, each widget bound to the address (bind="query-params") is in it with the value it shows.

The browser writes a bound widget into its address itself, and the server then sends its own copy of the address
whenever the app writes a key by hand (ui.page.keep_in_link: a page's step, a token). That copy is the address the
browser sent with its last rerun. Two quick changes can leave it without the first one: a CI run of
tests/browser/test_browser_attention_layer.py drew the 3 × 4 grid it was given and ended on ?al_step=b, the grid
lost (a link copied then opened the 6 × 8 grid). Here the run ends by comparing each bound widget drawn in it with
the address the server holds, and writes what is missing or stale: the browser's address then says what the
controls say, whatever order the two changes arrived in.

Streamlit has no public call for this (st.query_params refuses a bound key), so this uses the one Streamlit itself
calls to restore a bound value (QueryParams.set_corrected_value, streamlit 1.67): a widget's value in the address
exactly as Streamlit writes it, and only when the address differs (stored_param_matches_corrected_value).
"""

from __future__ import annotations

from streamlit.runtime.scriptrunner import get_script_run_ctx


def write_bound_values_the_address_lacks() -> None:
    """Each bound widget drawn in this run whose value (other than its default) the address lacks, or holds another
    value of, is written into it (nothing is written in a run where the browser's address had them all)."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return
    drawn = ctx.shared.widget_ids_this_run.snapshot()
    state = ctx.session_state._state  # the widgets' metadata: no public call reads it
    with ctx.session_state.query_params() as address:
        for key, binding in list(address._bindings_by_param.items()):  # the bindings, by key
            metadata = state._new_widget_state.widget_metadata.get(binding.widget_id)
            if binding.widget_id not in drawn or metadata is None:
                continue
            value = state[binding.widget_id]
            if value == metadata.deserializer(None):  # at its default: the browser leaves it out of the address
                continue
            as_written = metadata.serializer(value)
            if not address.stored_param_matches_corrected_value(key, as_written, metadata.value_type):
                address.set_corrected_value(key, as_written, metadata.value_type)
