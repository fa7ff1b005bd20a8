"""Head claims: is this head really doing that? A head's claim tested over a corpus with baselines and
counterexamples, heads knocked out against same-size sets, and weight against contribution.

URL keys (besides the shared ones: model, text, ...):
    hc_relation  coreference, verb_subject, same_word, previous_token or specials (attnviz.analysis.corpus.RELATIONS)
    hc_layer, hc_head   the head whose claim is tested (Find the head's "Test this over the corpus" sets them)
    hc_ablate    the heads knocked out, e.g. "L1 H0"; hc_kind  zero or mean
    hc_query     the query token of the weight-against-contribution rows (the sidebar's text)
"""

import math

import streamlit as st

import ui
from attnviz.analysis.claims import claim_score, head_table
from attnviz.analysis.contribution import contribution_norms
from attnviz.analysis.corpus import RELATIONS
from attnviz.lessons.find_head import default_pair, token_name
from attnviz.lessons.head_claims.figures import comparison_figure
from attnviz.lessons.head_claims.text import (
    ABLATION_LIMITS,
    ablation_sentence,
    baseline_rows,
    claim_sentence,
    failing_rows,
    head_name,
    shares_sentence,
)
from ui import heatmap_widget as hm
from ui.charts import plotly_chart
from ui.head_claims_cache import (
    best_head,
    closeness_for,
    comparison_for,
    corpus_run,
    outcome_for,
    relation_scores,
    special_shares,
)
from ui.runs import run_for


def clamp_url_int(key: str, n: int, what: str) -> None:
    """A layer or head from a link that this model lacks: say so and start from 0 (never a traceback)."""
    raw = st.query_params.get(key)
    if raw is not None and not (raw.isdigit() and int(raw) < n):
        st.warning(f"The link asks for {what} {raw}, which this model does not have ({what}s 0 to {n - 1}): "
                   f"showing {what} 0.", icon=":material/undo:")
        st.query_params[key] = "0"
        st.session_state.pop(key, None)
    if st.session_state.get(key) is not None and not 0 <= st.session_state[key] < n:
        st.session_state[key] = 0


def keep_known_heads(names: list[str]) -> None:
    """Heads to knock out that this model lacks (a link, or another model's choice): dropped, and said."""
    asked = list(st.session_state.get("hc_ablate") or []) + list(st.query_params.get_all("hc_ablate"))
    unknown = sorted({h for h in asked if h not in names})
    if unknown:
        st.warning(f"{', '.join(unknown)}: no such head in {model.name} (layers 0 to {L - 1}, heads 0 to {H - 1}), "
                   "so it is not knocked out.", icon=":material/undo:")
        if "hc_ablate" in st.session_state:
            st.session_state["hc_ablate"] = [h for h in st.session_state["hc_ablate"] if h in names]
        st.query_params["hc_ablate"] = [h for h in st.query_params.get_all("hc_ablate") if h in names]


def open_on_best_head(best: tuple[int, int], relation: str) -> None:
    """The layer and head pickers on the relation's best head (attnviz.analysis.claims.head_ranks: the highest hit
    rate over the corpus) when nothing named a head: a first visit without hc_layer and hc_head in its link, or a
    new relation while the head shown is the one the page chose for the previous relation (a head the reader
    picked, or a link named, stays)."""
    named = any(k in st.session_state or st.query_params.get(k) is not None for k in ("hc_layer", "hc_head"))
    chosen = st.session_state.get(BEST_SHOWN)  # (relation, layer, head) the page put the pickers on
    on_chosen = chosen is not None and (st.session_state.get("hc_layer"), st.session_state.get("hc_head")) == chosen[1:]
    if not named or (on_chosen and chosen[0] != relation):
        st.session_state["hc_layer"], st.session_state["hc_head"] = best
        st.session_state[BEST_SHOWN] = (relation, *best)


def knock_out_the_picked_head(layer: int, head: int) -> None:
    """A head picked above (by its pickers, a link or Find the head) since the page was last drawn in this session
    is the head knocked out: the knock-out follows the claim under test. The page's first run keeps the link's own
    set (hc_ablate), if it names one."""
    followed = st.session_state.get(FOLLOWED)
    st.session_state[FOLLOWED] = (layer, head)
    if followed is not None and followed != (layer, head):
        st.session_state["hc_ablate"] = [head_name(layer, head)]


BEST_SHOWN = "_hc_best_shown"  # (relation, layer, head): where the page put the pickers itself
FOLLOWED = "_hc_knocked_head"  # the picked (layer, head) the knock-out last followed


view = ui.open_page(
    "Head claims: is this head really doing that?",
    "One sentence invites over-reading. Here a head's claim (“it looks from the pronoun to its antecedent”) is "
    "tested over 300 labelled sentences beside baselines, heads are knocked out to see what breaks, and each "
    "key's weight is set beside the size of what it adds.",
    waits_for_text="The weight-against-contribution rows appear",
    settings=("text", "model"),  # its runs use no mask and the 1/√d_k scaling, as the model was trained
    # a question about the knock-out is about its seeded sequences, not the sentence (which, said with it, also ran
    # its four long options past a 1024×768 projector's bottom)
    subject={"knockout": ui.NO_SUBJECT})

run, layer, head = None, 0, 0  # what the later parts read, should the first fail
model, spec, device = view.model, view.model_spec, view.device
L, H = model.n_layers, model.n_heads
with ui.guard("Head claims"):
    # a lecture step's focus: the claim and this head against the baselines, which answer the step's question. The
    # grid of every head and the failures come after it, out of the figure: beside the class's answers on a
    # projector, a figure holding them ran its grid below the first screen, its labels thinned
    with ui.figure("claim"):
        clamp_url_int("hc_layer", L, "layer")
        clamp_url_int("hc_head", H, "head")
        st.subheader("1 · The claim over the corpus")
        pick = st.columns([3, 1, 1], vertical_alignment="bottom")
        # kept in the link by its name (?hc_relation=specials), not by bind=, which would write the picker's label
        ui.page.seed_choice_from_url("hc_relation", list(RELATIONS), "coreference")
        relation = pick[0].selectbox("Relation", list(RELATIONS), format_func=RELATIONS.get, key="hc_relation")
        ui.page.keep_in_link("hc_relation", relation)
        with st.spinner(f"Running {model.name} on every sentence of the corpus (one batched pass)…"):
            run, problem = corpus_run(spec, device)
        if run is not None:  # a head that shows the relation's point, unless a link or a pick named one
            open_on_best_head(best_head(spec, device, relation), relation)
        layer = pick[1].selectbox("Layer", list(range(L)), key="hc_layer", **ui.BOUND)
        head = pick[2].selectbox("Head", list(range(H)), key="hc_head", **ui.BOUND)
        if run is None:
            st.warning(f"{problem} Pick all-MiniLM-L6-v2 in {ui.setting_place('model')} to test claims; the knock-outs "
                       f"below work with {model.name}.", icon=":material/rule:")
        else:
            scores = relation_scores(spec, device, relation)
            score = claim_score(run, relation, layer, head, scores)
            st.markdown(claim_sentence(score, relation))
            ui.table(st, baseline_rows(scores, layer, head, score.rule_hit_rate), hide_index=True, width="stretch",
                         key="hc_baselines", column_config={
                             "what": st.column_config.TextColumn("what", width=330),
                             "top key is labelled": st.column_config.NumberColumn(format="percent"),
                             "mean weight on it": st.column_config.NumberColumn(format="%.3f")})
    if run is not None:
        grid, fails = st.columns([2, 3], gap="medium")
        with grid:
            hm.heatmap(head_table(scores)[0], [f"layer {i}" for i in range(L)], [f"head {h}" for h in range(H)],
                       key="hc_map", kind="weights", title="top key is labelled (share)",
                       x_title="head", y_title="layer", axis_words=("layer", "head"),
                       value_name=("share of labelled queries", "share"), selection={"panel": 0, "row": layer,
                                                                                      "col": head})
        with fails:
            st.markdown(f"**Where it fails: {len(score.failing)} of {score.n_items}.** Each “open” link shows the "
                        f"sentence in the explorer at layer {layer}, head {head}, the labelled cell selected.")
            if score.failing:
                ui.table(st, failing_rows(run.corpus, scores, score.failing, layer, head,
                                          st.session_state.get("model") or ""),
                             hide_index=True, width="stretch", key="hc_failing", height=260, column_config={
                                 "open": st.column_config.LinkColumn("open", display_text="open in the explorer"),
                                 "weight on labelled": st.column_config.NumberColumn(format="%.3f")})

with ui.guard("Knock heads out"), ui.figure("knockout"):  # a lecture step's focus
    st.subheader("2 · Knock heads out")
    with st.spinner(f"Preparing {model.name}'s outcome…"):
        outcome = outcome_for(spec, device)
    st.caption(f"Outcome: {outcome.describe}. Higher is worse.")
    names = [head_name(lay, h) for lay in range(L) for h in range(H)]
    default = [head_name(1, 0), head_name(1, 1)] if model.cfg.causal and L > 1 and H > 1 else [head_name(layer, head)]
    knock_out_the_picked_head(layer, head)
    keep_known_heads(names)
    ablate_at = st.columns([3, 1], vertical_alignment="bottom")
    chosen = ablate_at[0].multiselect("Heads to knock out", names, default=default, key="hc_ablate", **ui.BOUND)
    kind = ablate_at[1].radio("Replace their output by", ["zero", "mean"], horizontal=True, key="hc_kind",
                              help="zero: the head's output is 0 at every position; mean: its mean over the "
                                   "sentences the outcome is measured on.", **ui.BOUND)
    if not chosen:
        st.warning("Pick at least one head to knock out (the set is empty): e.g. L1 H0 and L1 H1.",
                   icon=":material/rule:")
    else:
        heads = tuple(sorted((int(n.split()[0][1:]), int(n.split()[1][1:])) for n in chosen))
        limit = 40 if model.cfg.causal else 12  # an encoder's knock-out runs 60 sentences: fewer sets, seeded
        comparison = comparison_for(spec, device, heads, kind, limit)
        sampled = math.comb(L * H, len(heads)) - 1 > len(comparison.others)
        st.markdown(ablation_sentence(heads, kind, comparison.chosen_value, comparison.baseline,
                                      comparison.share_below, len(comparison.others), outcome.name, outcome.unit,
                                      outcome.chance, sampled))
        plotly_chart(st, comparison_figure(comparison, outcome.axis, outcome.unit, outcome.chance), key="hc_chart")
        if outcome.sample is not None:
            before, after = closeness_for(spec, device, heads, kind)
            ui.table(st, [{"": "nothing knocked out", "cos(pronoun, antecedent)": before.to_antecedent,
                           "cos(pronoun, other noun)": before.to_other, "closer to antecedent": before.closer_to_antecedent},
                          {"": "these heads knocked out", "cos(pronoun, antecedent)": after.to_antecedent,
                           "cos(pronoun, other noun)": after.to_other, "closer to antecedent": after.closer_to_antecedent}],
                         hide_index=True, key="hc_coref", column_config={
                             "cos(pronoun, antecedent)": st.column_config.NumberColumn(format="%.3f"),
                             "cos(pronoun, other noun)": st.column_config.NumberColumn(format="%.3f"),
                             "closer to antecedent": st.column_config.NumberColumn(format="percent")})
            st.caption("The pronoun's final vector against each candidate noun's, over the sample's coreference "
                       "sentences: the cosines, and how often the pronoun is closer to the noun it means.")
    st.info(ABLATION_LIMITS, icon=":material/science:")

with ui.guard("Weight against contribution"), ui.figure("contribution"):  # a lecture step's focus
    st.subheader("3 · Weight against contribution")
    res = run_for(spec, device, view.text, "none", True, keep=True)
    labels, n = res.labels, len(res.labels)
    ui.page.clamp_token_choice("hc_query", n)
    ui.page.seed_choice_from_url("hc_query", list(range(n)), default_pair(labels)[0])
    query = st.selectbox("Query token (of the shared text)", list(range(n)), key="hc_query",
                         format_func=lambda i: token_name(i, labels), persist_state="session")
    ui.page.keep_in_link("hc_query", query)
    alpha = res.traces[layer].weights[0, head, query]  # (n,)
    norms = contribution_norms(model, res.traces, layer)[0, head, query]  # (n,)
    hm.heatmap(alpha[None], [f"{query}: {labels[query]}"], labels, key="hc_alpha", kind="weights",
               title=f"layer {layer}, head {head}: weight α (after softmax)", show_values=n <= 16)
    hm.heatmap(norms[None], [f"{query}: {labels[query]}"], labels, key="hc_norm", kind="magnitude",
               title=f"layer {layer}, head {head}: the size of what each key adds · ‖α·(x W_V + b_V) W_O‖",
               show_values=n <= 16, value_name=("‖α·v·W_O‖", "norm"))
    st.caption("Top: each key's weight, summing to 1. Bottom: the length of the vector each key actually adds to "
               "the query's output (Kobayashi et al. 2020). A key can take much weight yet add little, when its "
               "value vector is short.")
    if run is not None:
        weight_share, norm_share = special_shares(spec, device)
        st.markdown(shares_sentence(layer, head, float(weight_share[layer, head]), float(norm_share[layer, head]),
                                    len(run.corpus.sentences)))
        st.caption(f"Over all {L * H} heads: {float(weight_share.mean()):.0%} of the weight and "
                   f"{float(norm_share.mean()):.0%} of the norm go to [CLS], [SEP] and punctuation.")
ui.mark_drawn(view)
