"""Induction heads: score every head of a causal model on a repeated sequence; show the best two and the loss."""

import streamlit as st

import ui
from attnviz.lessons.induction.figures import loss_figure, score_axis_labels
from attnviz.lessons.induction.probe import HALF_RANGE, chance_sentence, probe, random_repeated_ids, text_twice_ids
from attnviz.lessons.kv_cache.decoding import writes_text
from ui.charts import plotly_chart
from ui.heatmap_widget import heatmap
from ui.memo import shared
from ui.runs import model_for


@shared(max_entries=32)
def _probe(spec: str, device: str, ids: tuple, period: int, first: int):
    return probe(model_for(spec, device), list(ids), period, first)


def _new_sequence():
    st.session_state["ih_seed"] = int(st.session_state.get("ih_seed", 0)) + 1


view = ui.open_page("Induction heads: continuing a pattern seen before", lesson=ui.LessonModel(
    writes_text, "attnviz-tiny-llama",
    "{model} is not a causal language model (it has no next-token loss), so this page shows **tiny-llama**, the "
    "2-layer Llama attnviz trained on repeated words; the sidebar's model stays as it is for the other pages. Pick "
    "**tiny-llama** (or GPT-2) in the sidebar's Model to choose it yourself."),
    settings=("model", "text"),  # the text only as "your text, twice"; the probe runs at the trained settings
    subject=ui.NO_SUBJECT)  # a lecture's question here is about the repeated block it makes, not the sentence
st.markdown(
    "Give a model a list of random words, then the same list again. The first time, nothing tells it what comes "
    "next. The second time it can do much better: find where the current word appeared before and predict the word "
    "that followed it then. The attention heads that do this are called **induction heads**.\n\n"
    "One head cannot do it alone. A query can only compare itself with keys, and the key it needs is not the "
    "earlier copy of the current word but the word *after* it, whose own content has nothing in common with the "
    "current word. So it takes two layers: first a **previous-token head** copies into each position "
    "“the word before me was X”. Then a head in a later layer asks, from the current word X: “which position was "
    "preceded by X?” That position's key now answers, and the head copies its word forward as the prediction.")

with ui.guard("The induction lesson"):
    model, spec = view.model, view.model_spec
    controls = st.columns([1.4, 1.2, 1.1, 0.5], vertical_alignment="bottom")
    source = controls[0].radio("Sequence", ["random words", "your text, twice"], horizontal=True, key="ih_source",
                               help="Random words repeated once; or your text followed by itself.", **ui.BOUND)
    if source == "random words":
        half = controls[1].slider("Words in the block", *HALF_RANGE, 20, key="ih_half", **ui.BOUND)
        seed = int(st.session_state.setdefault("ih_seed", 0))
        controls[2].button("New sequence", on_click=_new_sequence, icon=":material/casino:",
                          help="Draw another seeded random block of words.")
        controls[3].caption(f"seed {seed}")
        ids, first = random_repeated_ids(model, half, seed)
        period = half
    else:
        ids, period, first = text_twice_ids(model, view.text)
    p = _probe(spec, view.device, tuple(ids), period, first)
    st.markdown(f"**{model.name}** · {model.n_layers} layers × {model.n_heads} heads · **{len(ids)} tokens**: "
                f"a block of {period} tokens, then the same block again.")

    st.subheader("Which heads do what: a score for every layer × head")
    rows, cols = score_axis_labels(model.n_layers, model.n_heads)
    left, right = st.columns(2)
    with left:
        heatmap(p.previous, rows, cols, key="ih_prev_map", kind="magnitude", bytes_per_cell=4, show_values=True, limit=1.0,
                 x_title="head",
                title="previous-token score")
    with right:
        heatmap(p.induction, rows, cols, key="ih_ind_map", kind="magnitude", bytes_per_cell=4, show_values=True, limit=1.0,
                 x_title="head",
                title="induction score")
    st.caption("**Previous-token score**: the mean weight each token gives to the token just before it. "
               "**Induction score**: the mean weight each token of the second copy gives to the token that followed "
               "its first occurrence. Both are averages of attention weights after softmax (0 = never, 1 = always); "
               "a head that spreads its weight evenly over n tokens scores about 1/n.")

    (pl, ph), (il, ih) = p.best_previous, p.best_induction
    st.subheader("The two heads at work on this sequence")
    m = st.columns(2)
    m[0].metric("Best previous-token head", f"layer {pl}, head {ph}", f"score {p.previous[pl, ph]:.3f}",
                delta_color="off")
    m[1].metric("Best induction head", f"layer {il}, head {ih}", f"score {p.induction[il, ih]:.3f}",
                delta_color="off")
    heatmap(p.attentions[pl, ph], p.labels, key="ih_prev_head", kind="weights",
            title=f"previous-token head: layer {pl}, head {ph}, weights after softmax")
    st.caption(f"Each row is a query token. A perfect previous-token head puts all of a row's weight one step left "
               f"of the diagonal (score 1); this head's score is {p.previous[pl, ph]:.3f}.")
    with ui.figure("induction_head"):  # a lecture step's focus: where the induction head looks
        heatmap(p.attentions[il, ih], p.labels, key="ih_ind_head", kind="weights",
                title=f"induction head: layer {il}, head {ih}, weights after softmax")
        st.caption(f"A perfect induction head puts each second-copy row's weight {period - 1} tokens left of the "
                   "diagonal: on the token that came after the same word the first time, which is the word to predict "
                   f"next. This head's score is {p.induction[il, ih]:.3f}.")
    if p.induction[il, ih] < 0.3:
        st.info("In this model no head draws a sharp induction stripe yet (best score "
                f"{p.induction[il, ih]:.2f}): the loss below still drops in the second copy, so it uses the repeat, "
                "but in a blurrier way, spread over several heads.", icon=":material/info:")
    if il <= pl:
        st.caption("Here the best induction head is not in a later layer than the best previous-token head: the "
                   "scores are weak or the pattern is shared among several heads.")

    st.subheader("The loss drops in the repeated half")
    first_loss, second_loss = p.copy_losses()
    m = st.columns(2)
    m[0].metric("Mean loss, first copy", f"{first_loss:.2f} nats")
    m[1].metric("Mean loss, second copy", f"{second_loss:.2f} nats")
    plotly_chart(st, loss_figure(p), width="stretch", key="ih_loss")
    st.caption("Loss = −log of the probability the model gave to the token that really came next (0 = certain and "
               "right). The first word of each copy is left out of the means: nothing before it can predict it. "
               + chance_sentence(model.name, p))
ui.mark_drawn(view)
