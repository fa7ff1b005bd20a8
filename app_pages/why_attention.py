"""Why attention: two GRU encoder–decoders that differ only in attention, on numbers in words -> digits.

The numbers are the shipped models' (attnviz/lessons/why_attention/bottleneck.py), run by attnviz's own code.
URL keys: wa_text (the source sentence in the Try-it part).
"""

import streamlit as st

import ui
from attnviz.lessons.why_attention import figures as wf
from attnviz.lessons.why_attention.bottleneck import accuracy_against_length, alignment, sentences
from ui.charts import plotly_chart
from ui.heatmap_widget import heatmap
from ui.memo import shared
from ui.present import presenting

EXAMPLES = {  # a short, a middle and a long source; the long one is where the fixed-size vector breaks
    "short": "forty two",
    "middle": "nine hundred eighty seven thousand six hundred fifty four, twelve",
    "long": "six hundred four million two hundred eighteen thousand three hundred seventy seven, "
            "seventy one thousand three, fifty eight",
}


@shared(max_entries=1)
def _curve():
    return accuracy_against_length()


@shared(max_entries=32)
def _alignment(text: str):
    return alignment(text)


def _try_it(text: str) -> None:
    """Both models' answers for `text` and the attention model's alignment matrix."""
    al = _alignment(text)
    def verdict(answer: str) -> str:
        if al.expected is None:
            return "no verdict"
        return "✓ right" if answer == al.expected else "✗ wrong"

    # a table, not metrics: a long answer must be read whole, digit by digit; a lecture step's focus (the answers)
    ui.figure("try_it").markdown("| | digits | |\n|---|---|---|\n"
                f"| the right answer | `{al.expected or '—'}` | |\n"
                f"| one fixed-size vector wrote | `{al.bottleneck_answer or '(nothing)'}` | {verdict(al.bottleneck_answer)} |\n"
                f"| additive attention wrote | `{al.attention_answer or '(nothing)'}` | {verdict(al.attention_answer)} |")
    if al.expected is None:
        st.caption("This text is not written the way the task writes numbers (it writes 'one thousand two hundred', "
                   "never 'twelve hundred'), so there is no right answer to compare with.")
    if not al.output_labels:
        st.info("The attention model wrote nothing for this text, so there are no weights to show.")
        return
    heatmap(al.weights.numpy(), al.output_labels, al.source_labels, key="wa_alignment",
            title="α_ij: the attention model's weights, one row per digit or comma it wrote",
            x_title="source token j (its annotation h_j)")
    best = wf.strongest_source(al)
    st.caption("Each row is one output step i and sums to 1. Read it as: while writing this digit (or comma), how "
               "much of each source token's annotation went into c_i. Largest weight per output: "
               + "; ".join(f"{out} ← {word} ({w:.2f})" for out, word, w in best) + ".")


def _use_example() -> None:
    choice = st.session_state.get("wa_example")
    if choice in EXAMPLES:
        st.session_state["wa_text"] = EXAMPLES[choice]


view = ui.open_page("Why attention",
                    "Before attention, an encoder–decoder read the whole source into one vector of fixed size and "
                    "wrote the output from that vector alone. Here two small models trained by attnviz on the same "
                    "task differ in one thing: one has that single vector, the other attends over every source word.",
                    settings=(), subject=ui.Subject("The number, in words", "wa_text", EXAMPLES["long"]))

with ui.guard("The comparison"):
    # on a projector the chart comes first and the task's paragraph under it (the lecturer says it aloud)
    task_here, figures, task_later = st.container(), st.container(), st.container()
    later = presenting()
    (task_later if later else task_here).markdown(
        "**The task**: write a number given in words as digits (*nine hundred twelve* → *912*), one or several "
        "numbers separated by commas. Two recurrent (GRU) encoder–decoders learned it from the same data with the "
        "same training and the same encoder and decoder sizes. Both encoders read the words one at a time (left to "
        "right, and once more right to left); then the decoder writes the digits one at a time. What the decoder "
        "can see of the source is the only difference" + (", the equation above." if later else ":"))
    figures.latex(wf.encoder_decoder_latex())
    figures.caption(wf.encoder_decoder_legend())

    with st.spinner("Running both models on 2,000 held-out sentences (first time only)…"):
        curve = _curve()
    chart, said = figures.columns([3, 2])
    for line in sentences(curve):
        said.markdown(f"- {line}")
    said.caption("Exact match: every digit and comma right, and the answer stops where it should. Lengths count "
                 "words and commas. The sentences were drawn at random from numbers kept out of training.")

    st.header("Try it: where does the attention model look?")
    st.segmented_control("Examples", list(EXAMPLES), key="wa_example", on_change=_use_example,
                         help="Fills the box with a sentence; the long one is where the fixed-size vector fails.")
    # value=, not a value seeded into session state: the address keeps only what differs from a widget's own
    # default, so a box cleared by hand must have a default the link can be read back to (the examples writing to
    # it too only logs Streamlit's note on the server)
    text = st.text_input("A number in words (commas between numbers)", EXAMPLES["long"], key="wa_text", max_chars=400,
                         **ui.BOUND)
    n_words = len(text.replace(",", " , ").split())  # the task counts commas as words
    # the chart sits above the box but rings the bin of what the box holds, so it is drawn after it
    plotly_chart(chart, wf.accuracy_figure(curve, wf.bin_of(curve, n_words)), width="stretch", key="wa_accuracy")
    with ui.guard("The alignment"):
        _try_it(text)

    st.header("From here to the Transformer")
    st.markdown("Look at the scoring again: the decoder's state $s_{i-1}$ asks, every source annotation $h_j$ "
                "answers with a score, the softmax turns the scores into weights, and the weights average the "
                "annotations. That is attention's query ($s_{i-1}$), keys and values, with one twist: here the "
                "annotations $h_j$ are both the keys (they are scored) and the values (they are averaged). The "
                "Transformer keeps this step, but gives each token its own key and value (two projections of it, "
                "$k_j = x_j W_K$ and $v_j = x_j W_V$) and scores with a scaled dot product instead of a small "
                "network. What it drops is the "
                "recurrence: in a GRU the state of word j waits for word j−1, while attention scores every pair "
                "at once, and any two words are one step apart however far they sit in the text.")

ui.mark_drawn(view)
