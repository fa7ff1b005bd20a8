"""Compare: one head under two configurations, A (the sidebar) and B, with what changed between them."""

import math
from dataclasses import replace

import streamlit as st

import ui
from attnviz.analysis.compare import compare_patterns
from attnviz.analysis.stats import head_entropy, head_max_weight
from attnviz.lessons.compare.figures import DIFF_VALUES_UP_TO, kl_text, row_kl_figure, symmetric_range
from attnviz.lessons.compare.sides import PRESETS, SideConfig, describe_change
from ui.charts import plotly_chart
from ui.heatmap_widget import heatmap
from ui.parts import compare_side_b as side_b

view = ui.open_page("Compare two settings",
                    "Side A uses the text, model, mask and scaling set for every page; side B has its own controls "
                    "below and starts as a copy of A. "
                    "Change one thing in B (or pick a classic comparison) and see what it does to the same head.",
                    layer_heads="layer")


def run_or_message(side_view, who: str):
    """A side's run, or None with a clear message when it has no text to run."""
    if side_view.text_problem:
        st.warning(f"Side {who} has nothing to show: {side_view.text_problem} Side {'B' if who == 'A' else 'A'} is "
                   "shown alone.", icon=":material/edit:")
        return None
    res = side_view.run()
    ui.run_notes(res, who=f"{who}: ")
    return res


def change_vs_a(change: float) -> dict:
    """st.metric's delta for B against A: no arrow when it rounds to 0.000 (an up arrow there says 'grew')."""
    text = f"{change:+.3f} vs A"
    return {"delta": text, "delta_arrow": "off"} if float(f"{change:.3f}") == 0 else {"delta": text}


def comparison(view) -> None:
    """Both sides, their heatmaps, what changed, the difference and the per-row KL (when the tokens match)."""

    model_a, spec_a, layer_a = view.model, view.model_spec, view.layer
    preset = st.segmented_control("Classic comparisons (B = A with one change)", list(PRESETS), key="cmp_preset",
                                      on_change=side_b.on_preset, help="\n".join(f"**{k}**: {v}" for k, v in
                                                                             PRESETS.items()), **ui.BOUND)
    top = st.columns([1, 1, 2], vertical_alignment="bottom")  # roomy enough for the labels at 1024 px
    head_a = top[0].selectbox("Head (A)", list(range(model_a.n_heads)), key="cmp_head", **ui.BOUND)
    top[1].button("Copy A into B", key="cmp_copy", on_click=side_b.on_copy, help="Make B equal to A again.")
    side_a = SideConfig(spec_a, view.text, view.mask_choice, view.scale, layer_a, head_a)
    side_b.remember_side_a(side_a, preset)
    st.markdown(f"**Side A** (the shared settings): {model_a.name} · layer {layer_a}, head {head_a}")
    b, view_b = side_b.side_b_controls(side_a)
    model_b = view_b.model
    sentence = st.empty()

    left, right = st.columns(2, gap="large")
    with left:
        res_a = run_or_message(view, "A")
    with right:
        res_b = run_or_message(view_b, "B")
    side_a, b = replace(side_a, mask_spec=view.mask_spec), replace(b, mask_spec=view_b.mask_spec)  # the masks applied
    for col, res, side, name, model in ((left, res_a, side_a, "A", model_a), (right, res_b, b, "B", model_b)):
        if res is not None:
            title = f"{name}: {model.name}, layer {side.layer}, head {side.head}"
            with col:
                heatmap(res.attentions[side.layer, side.head], res.labels, key=f"cmp_heatmap_{name.lower()}",
                        title=title, kind="weights", show_values=False)
    if res_a is None or res_b is None:
        return

    pattern_a = res_a.attentions[side_a.layer, side_a.head]  # (n_a, n_a)
    pattern_b = res_b.attentions[b.layer, b.head]  # (n_b, n_b)
    if list(res_a.tokens) != list(res_b.tokens):
        st.warning("A and B have different tokens (another text, another tokenizer, or [PAD] tokens on one side), "
                   "so cell (i, j) of A and cell (i, j) of B are not the same pair of words: a cell-by-cell "
                   "difference and a per-row KL would be meaningless. Only the two heatmaps and the summary "
                   f"numbers are compared. Mind the lengths: A has {len(res_a.tokens)} tokens and B "
                   f"{len(res_b.tokens)}, and a row's entropy is at most ln n ({math.log(len(res_a.tokens)):.2f} "
                   f"vs {math.log(len(res_b.tokens)):.2f} nats).", icon=":material/compare_arrows:")
        h_a, h_b = float(head_entropy(pattern_a)), float(head_entropy(pattern_b))
        m_a, m_b = float(head_max_weight(pattern_a)), float(head_max_weight(pattern_b))
        sentence.info(describe_change(side_a, b, h_a - h_b, m_a - m_b), icon=":material/chat:")
        summary = {"entropy_a": h_a, "entropy_b": h_b, "max_weight_a": m_a, "max_weight_b": m_b, "mean_kl": None}
    else:
        comparison = compare_patterns(pattern_a, pattern_b)
        summary = comparison.summary()
        sentence.info(describe_change(side_a, b, comparison.entropy_change, comparison.max_weight_change,
                                      summary["mean_kl"]), icon=":material/chat:")

    metrics = st.columns(3) + st.columns(3)  # two rows of three: five metrics in one row are cut at 1024 px
    metrics[0].metric("Mean row entropy, A", f"{summary['entropy_a']:.3f} nats")
    metrics[1].metric("Mean row entropy, B", f"{summary['entropy_b']:.3f} nats", delta_color="off",
                      **change_vs_a(summary['entropy_b'] - summary['entropy_a']))
    metrics[3].metric("Mean max weight, A", f"{summary['max_weight_a']:.3f}")
    metrics[4].metric("Mean max weight, B", f"{summary['max_weight_b']:.3f}", delta_color="off",
                      **change_vs_a(summary['max_weight_b'] - summary['max_weight_a']))
    if summary["mean_kl"] is not None:
        metrics[2].metric("Mean KL(A‖B) per row", f"{kl_text(summary['mean_kl'])} nats")
    st.caption("Entropy: 0 nats = all weight on one key, ln n = spread evenly. Max weight: the mean of each row's "
               "largest weight. KL(A‖B): how surprised you would be by A's row if you expected B's "
               "(0 = identical rows). Fully masked rows are left out of all three.")
    if summary["mean_kl"] is None:
        return

    diff_col, kl_col = st.columns([3, 2], gap="large")
    with diff_col:
        st.subheader("Difference A − B")
        heatmap(comparison.difference, res_a.labels, res_a.labels, key="cmp_diff", kind="signed",
                title="A − B: red = A attends more, blue = B attends more", x_title="key",
                limit=symmetric_range(comparison.difference), show_values=len(res_a.labels) <= DIFF_VALUES_UP_TO)
    with kl_col:
        st.subheader("Per-row KL divergence")
        st.latex(r"\mathrm{KL}(A_i \,\|\, B_i) = \sum_j A_{ij} \log \frac{A_{ij}}{B_{ij}}")
        plotly_chart(st, row_kl_figure(comparison.row_kl, res_a.labels, comparison.compared_rows),
                        width="stretch", key="cmp_kl")
        st.caption("One bar per query token: how differently that token spreads its attention in A and in B. "
                   "The dashed line is the mean over rows. Grey bars are rows a mask empties on one side.")
        if summary["infinite_rows"]:
            st.info(f"{int(summary['infinite_rows'])} row(s) have KL(A‖B) = ∞ (red bars marked ∞): for those "
                    "queries B gives zero weight to a key that A attends to (B's mask forbids it, or its weight "
                    "is exactly 0), and log(A/0) is infinite. So the mean is ∞ too: B rules out what A relies on.",
                    icon=":material/all_inclusive:")


with ui.guard("The comparison"):
    comparison(view)
ui.mark_drawn(view)
