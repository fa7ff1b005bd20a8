"""Find the head: pick a query token and a key token; every layer × head ranked by the weight the query gives the
key, the best heads drawn in full, and one click opens a head in the explorer.

URL keys (besides the shared ones: text, model, mask, scaled, ...):
    fh_query   the query token (the one looking): its position (0 = the first token, [CLS] in BERT), or its text
               ("it": the first occurrence, compared without case), or the picker's spelling "it (10)"
    fh_key     the key token (the one looked at), the same way
    fh_top     how many of the best heads are drawn in full (1 to 6)
e.g. /find_head?text=The%20animal%20didn't%20cross%20the%20street%20because%20it%20was%20too%20tired.&fh_query=10&fh_key=2
The page writes positions back into the address bar (fh_query=10), so a copied link names the same tokens.
"""

import streamlit as st

import ui
from attnviz.analysis.head_search import allowed_keys, pair_weights, rank_heads_for_pair
from attnviz.draw.describe import describe_scale
from attnviz.lessons.find_head import (
    MAX_TOP,
    column_heads_sentence,
    default_pair,
    explorer_params,
    masked_pair_sentence,
    ranking_rows,
    summary_sentence,
    token_name,
)
from ui import heatmap_widget as hm
from ui.page import keep_in_link
from ui.present import table_height
from ui.token_link import keep_token_in_link, settle_token, token_drawn

view = ui.open_page(
    "Find the head: who looks from one token to another?",
    "Pick a query token (the one looking) and a key token (the one looked at). Every head of every layer is ranked "
    "by the weight, after softmax, that this query gives this key, for the mask and scaling on screen; the best "
    "heads are drawn in full, and a click opens one in the explorer.",
    waits_for_text="The ranking appears")

with ui.guard("Find the head"):
    model, res = view.model, view.run()
    ui.run_notes(res)
    labels, n = res.labels, len(res.labels)
    first_query, first_key = default_pair(labels)
    settle_token("fh_query", labels, first_query, "query")
    settle_token("fh_key", labels, first_key, "key")
    pick = st.columns([2, 2, 1], vertical_alignment="bottom")
    query = pick[0].selectbox("Query token (the one looking)", list(range(n)), key="fh_query",
                              format_func=lambda i: token_name(i, labels), persist_state="session")
    token_drawn("fh_query", labels)
    key = pick[1].selectbox("Key token (the one looked at)", list(range(n)), key="fh_key",
                            format_func=lambda i: token_name(i, labels), persist_state="session")
    token_drawn("fh_key", labels)
    counts = list(range(1, MAX_TOP + 1))
    ui.page.seed_choice_from_url("fh_top", counts, 3)  # a link's count if it is one the picker offers, else 3
    top = pick[2].selectbox("Heads drawn", counts, key="fh_top", persist_state="session")
    keep_token_in_link("fh_query", query, labels)
    keep_token_in_link("fh_key", key, labels)
    keep_in_link("fh_top", top)

    ranked = rank_heads_for_pair(res, query, key)
    allowed = allowed_keys(res, query)
    forbidden = res.mask is not None and not bool(res.mask[query, key])
    if forbidden:
        st.warning(masked_pair_sentence(query, key, labels), icon=":material/block:")
    else:
        st.markdown(summary_sentence(ranked, query, key, labels, allowed))

    left, right = ui.figure("ranking").columns([3, 2], gap="medium")  # a lecture step's focus: every head ranked
    with left:
        hm.heatmap(pair_weights(res.attentions, query, key), [f"layer {layer}" for layer in range(model.n_layers)],
                   [f"head {h}" for h in range(model.n_heads)], key="fh_map", kind="weights",
                   title=f"{token_name(query, labels)} → {token_name(key, labels)}",
                   x_title="head", y_title="layer", axis_words=("layer", "head"),
                   value_name=("weight after softmax of this one pair", "weight"))
    with right:
        ui.table(st, ranking_rows(ranked, allowed), hide_index=True, width="stretch",
                     height=table_height(len(ranked), most=8), key="fh_table",
                     column_config={"weight": st.column_config.NumberColumn(format="%.3f"),
                                    "others": st.column_config.NumberColumn(
                                        format="%.3f", help="the mean weight the other queries (those the mask lets "
                                                            "see this key) give the same key in this head"),
                                    "column": st.column_config.CheckboxColumn(
                                        help="a column head: the other queries give this key at least half this "
                                             "query's weight on average, so the head looks at the key from everywhere"),
                                    "× even spread": st.column_config.NumberColumn(
                                        format="%.1f", help=f"the weight × {allowed}: how many times an even spread "
                                                            f"over the {allowed} keys this query may see")})
    st.caption(f"{model.name} · {model.n_layers} layers × {model.n_heads} heads = {len(ranked)} heads ranked · "
               f"{n} tokens · mask `{view.mask_spec}` · "
               f"{describe_scale(res.scale, model.d_head, trained=model.source is not None)}")

    st.subheader(f"The {top} best head{'s' if top > 1 else ''}, in full")
    st.caption("Each head's whole pattern: rows = queries, columns = keys. The ring marks the pair "
               f"{token_name(query, labels)} → {token_name(key, labels)}. “Open in the explorer” opens that layer "
               "with this head and the pair selected, its arithmetic beside it.")
    if not forbidden:
        st.markdown(column_heads_sentence(ranked[:top], key, labels))
    per_row = min(top, 3)
    for start in range(0, top, per_row):
        for slot, best in zip(st.columns(per_row), ranked[start:start + per_row], strict=False):
            with slot:
                hm.heatmap(res.attentions[best.layer, best.head], labels, key=f"fh_head_{best.rank}",
                           title=f"#{best.rank} · layer {best.layer}, head {best.head} · {best.weight:.2f}",
                           selectable=True, selection={"panel": 0, "row": query, "col": key})
                if st.button("Open in the explorer", key=f"fh_open_{best.rank}", icon=":material/open_in_new:",
                             help=f"The explorer at layer {best.layer}, head {best.head}, with this pair selected"):
                    params = explorer_params(best, query, key, labels)
                    # the explorer's pickers read the session: set them, and name them in the link so that the
                    # settings carried from this page (ui/across_pages.py) do not put the old ones back
                    st.session_state["layer"], st.session_state["heads"] = best.layer, [best.head]
                    st.switch_page("app_pages/explorer.py", query_params=params)
                if st.button("Test this over the corpus", key=f"fh_claim_{best.rank}", icon=":material/fact_check:",
                             help=f"Head claims: does layer {best.layer}, head {best.head} look from a pronoun to its "
                                  "antecedent over 300 labelled sentences, against baselines?"):
                    claim = {"hc_layer": best.layer, "hc_head": best.head, "hc_relation": "coreference"}
                    st.session_state.update(claim)  # the claims page's pickers read the session, like the explorer's
                    st.switch_page("app_pages/head_claims.py", query_params={k: str(v) for k, v in claim.items()})
ui.mark_drawn(view)
