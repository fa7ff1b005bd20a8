"""A step's question answered by the class: the answer box a follower sees before Reveal (per the step's answer
kind), and at Reveal the class's answers beside the model's truth.

Answers are anonymous: a browser is a random id (SESSION), kept in a cookie for the browser's session so that a
follower's next step (a fresh page load) and a reload are the same student, never a name.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

import numpy as np
import streamlit as st

from attnviz.draw.class_answers import choice_figure, number_figure
from attnviz.errors import AttnvizError
from attnviz.lecture import answer_kinds as kinds
from attnviz.lecture.store import StoreError
from attnviz.lessons.explorer.selection import Selection
from attnviz.lessons.scaling.experiments import dot_product_variance_experiment
from attnviz.lessons.scaling.figures import D_K_GRID
from ui.announce import announce
from ui.charts import plotly_chart
from ui.heatmap_widget import heatmap
from ui.lecture.store import lecture_store, store_message
from ui.memo import shared

SESSION = "_attnviz_student"  # this browser's anonymous id (session_state), also its cookie's name
ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{16,32}")


def student_session() -> str:
    """This browser's anonymous id: the cookie's when it has one, else a new one (and the cookie is set)."""
    mine = st.session_state.get(SESSION)
    if mine:
        return mine
    cookie = str(st.context.cookies.get(SESSION) or "")
    mine = cookie if ID_PATTERN.fullmatch(cookie) else secrets.token_urlsafe(16)
    st.session_state[SESSION] = mine
    if mine != cookie:  # a session cookie (no expiry): gone when the browser closes
        st.html(f"<script>(window.parent || window).document.cookie = '{SESSION}={mine}; path=/; SameSite=Lax';"
                "</script>", unsafe_allow_javascript=True)
    return mine


@dataclass(frozen=True)
class TokenTruth:
    """A token question's sentence and the model's row for its query."""

    tokens: tuple[str, ...]
    query: int  # the query token's position
    row: np.ndarray  # (n_keys,) the model's attention weights of that query, after softmax
    what: str  # which weights: "layer 2, head 3" or "layer 2, mean of heads 0-11"


def token_truth(view, spec: kinds.AnswerSpec) -> TokenTruth:
    """The from-scratch run for the page's settings: the query's row at the plan's layer (else the page's), for the
    plan's head, else the page's selected head (the explorer's selection), else its one chosen head, else the mean
    of its chosen heads. AttnvizError when the text cannot be run or the plan names a layer or head the model lacks."""
    if view.text_problem:
        raise AttnvizError(view.text_problem)
    res = view.run()
    tokens = tuple(res.tokens)
    n_layers, n_heads = res.attentions.shape[:2]
    selection = view.selection if isinstance(view.selection, Selection) else None  # the explorer's selected cell
    query = kinds.query_position(spec, tokens, None if selection is None else selection.query)
    layer = view.layer if spec.layer is None else spec.layer
    if spec.head is not None:
        heads = (spec.head,)
    else:
        heads = (selection.head,) if selection is not None else tuple(view.heads)
    if not 0 <= layer < n_layers or not all(0 <= h < n_heads for h in heads):
        raise AttnvizError(f"The plan asks for layer {layer}, head {', '.join(map(str, heads))}; this model has "
                           f"layers 0 to {n_layers - 1} and heads 0 to {n_heads - 1}.")
    weights = res.attentions[layer, list(heads), query, :]  # (heads, n_keys)
    row = weights.mean(dim=0).numpy()  # (n_keys,) the mean over heads; one head is itself
    what = f"layer {layer}, " + (f"head {heads[0]}" if len(heads) == 1 else f"mean of heads {', '.join(map(str, heads))}")
    return TokenTruth(tokens, query, row, what)


@dataclass(frozen=True)
class NumberTruth:
    """A number question's right value, computed by attnviz for the step (the plan's answer.quantity)."""

    value: float
    what: str  # what was computed, for the screen: "the model's weight of 'ran' on 'dog' (layer 0, head 1)"


def number_truth(view, spec: kinds.AnswerSpec) -> NumberTruth | None:
    """The value the plan's answer.quantity names, computed now for the page's settings (None when the plan names
    none: its `expected` is then the plan's word). AttnvizError when it cannot be computed here (the text, a token
    or a layer the sentence or model lacks)."""
    if spec.quantity == "weight":
        truth = token_truth(view, spec)
        key = kinds.token_position(spec.key, truth.tokens, "key")
        query = truth.tokens[truth.query]
        return NumberTruth(float(truth.row[key]), f"the model's weight of '{query}' (token {truth.query}) on "
                                                  f"'{truth.tokens[key]}' (token {key}), {truth.what}")
    if spec.quantity in ("dot_variance", "dot_spread"):
        variance = dot_variance(spec.d_k)
        if spec.quantity == "dot_variance":
            return NumberTruth(variance, f"Var(q·k) at d_k = {spec.d_k}, measured over {VARIANCE_SAMPLES} random "
                                         "pairs by the Scaling lab's experiment (theory: d_k)")
        return NumberTruth(variance ** 0.5, f"√Var(q·k), the typical size of q·k, at d_k = {spec.d_k}, measured over "
                                            f"{VARIANCE_SAMPLES} random pairs by the Scaling lab's experiment")
    if spec.quantity == "heads_per_kv":
        model = view.model
        return NumberTruth(float(model.n_heads // model.n_kv_heads),
                           f"{view.model_spec}: {model.n_heads} query heads share {model.n_kv_heads} key/value heads")
    return None


VARIANCE_SAMPLES = 4000  # the Scaling lab's experiment's default (app_pages/scaling.py)


@shared(max_entries=16)
def dot_variance(d_k: int) -> float:
    """Var(q·k) measured at d_k: the Scaling lab's own number when d_k is on its grid (the same seeded run), else
    the same experiment at d_k alone."""
    d_ks = D_K_GRID if d_k in D_K_GRID else (d_k,)
    experiment = dot_product_variance_experiment(d_ks, n_samples=VARIANCE_SAMPLES)
    return float(experiment.unscaled_variance[d_ks.index(d_k)])


NOTE = "_attnviz_answer_note"  # why this session's last answer was refused (a message), said on the next run
# an answer was sent and the box has not been drawn since: how many more full runs the poll may ask for to draw it
UNDRAWN = "_attnviz_answer_undrawn"
FULL_RUN_TRIES = 3


def answer_key(at) -> str:
    return f"lecture_answer_{at.room}_{at.number}"


def send_answer(at, tokens: tuple[str, ...]) -> None:
    """The answer widget changed: check it and keep it in the room (the store refuses it after Reveal, or past its
    limits). A refusal is said on the next run that draws the box (show_note); a kept answer is confirmed from the
    store on every run that draws the box (answer_box). The callback may run at the start of the poll fragment's
    run, which draws nothing else, and a full run can be lost (Streamlit stops a run when another one is asked for):
    UNDRAWN stays set until a run draws the box, and the poll asks for a full run meanwhile (ui/lecture/follow.py)."""
    picked = st.session_state.get(answer_key(at))
    if picked is None:
        return
    st.session_state[UNDRAWN] = FULL_RUN_TRIES
    spec = at.step.answer
    try:
        value = kinds.check_answer(spec, picked, tokens)
        store = lecture_store()
        if value == store.my_answer(at.room, at.number, student_session()):
            # the answer it holds: the browser sends a widget's value again when the box comes back (after a run
            # that did not draw it, as at Reveal): nothing to send, and no "answers are closed" for a student who
            # changed nothing
            return
        store.answer(at.room, at.number, student_session(), value)
    except AttnvizError as err:
        st.session_state[NOTE] = err


def show_note() -> None:
    """Why the last answer was refused, once."""
    st.session_state.pop(UNDRAWN, None)  # this run says what became of it
    note = st.session_state.pop(NOTE, None)
    if note is not None:
        store_message(note)


def confirmation(spec, mine: str, tokens: tuple[str, ...]) -> str:
    """What the student's page says of the answer the store keeps for this session."""
    return (f"Your answer is in: {kinds.shown_answer(spec, mine, tokens)}. You can change it until the lecturer "
            "reveals.")


def answer_box(at, view) -> None:
    """A follower's answer to the step's question, before Reveal: pick or type, changeable until Reveal."""
    spec = at.step.answer
    try:
        mine = lecture_store().my_answer(at.room, at.number, student_session())
        tokens: tuple[str, ...] = ()
        if spec.kind == "token":
            truth = token_truth(view, spec)
            tokens = truth.tokens
    except AttnvizError as err:
        store_message(err)
        st.session_state.pop(UNDRAWN, None)  # said: nothing more to draw
        return
    key = answer_key(at)
    sent = dict(key=key, on_change=send_answer, args=(at, tokens))
    with st.container(key="lecture_answer", border=True):
        if spec.kind == "token":
            query = f"'{tokens[truth.query]}' (token {truth.query})"
            st.markdown(f"**Your prediction:** which key token does **'{tokens[truth.query]}'** (token {truth.query}) "
                        "look at most? Tap it; or Tab to the tokens, move with ← →, and press Space.")
            # the group's name is what a screen reader says on entering it: the question, not "Key token"
            st.pills(f"Your prediction: the key token {query} looks at most", list(range(len(tokens))),
                     format_func=lambda i: tokens[i],
                     default=int(mine) if mine and mine.isdigit() and int(mine) < len(tokens) else None,
                     label_visibility="collapsed", **sent)
        elif spec.kind == "choice":
            st.pills("Your answer", list(spec.options), label_visibility="collapsed",
                     default=mine if mine in spec.options else None, **sent)
        else:
            st.number_input("Your answer (a number)", value=float(mine) if mine else None, format="%g",
                            placeholder="type a number, then Enter", **sent)
        show_note()
        if mine:  # from the store, on every run that draws the box: never a one-run flag
            said = confirmation(spec, mine, tokens)
            st.success(said, icon=":material/check:")
            announce(said, key=f"answer {at.room} {at.number} {mine}")  # said once per answer, not per run
        st.session_state.pop(UNDRAWN, None)  # the box is drawn with the store's answer


def class_panel(at, view, key: str = "") -> None:
    """At Reveal: the class's answers beside the model's truth (token: the class's share per key token over the
    model's row; choice and number: a histogram with the right answer marked)."""
    spec = at.step.answer
    try:
        values = [a.value for a in lecture_store().answers(at.room, at.number, key or None)]
    except StoreError as err:
        store_message(err)
        return
    with st.container(key="lecture_class"):
        if spec.kind == "token":
            try:
                truth = token_truth(view, spec)
            except AttnvizError as err:
                st.warning(f"The model's row: {err}", icon=":material/block:")
                return
            class_vs_model(truth, kinds.token_counts(values, len(truth.tokens)))
        elif spec.kind == "choice":
            right = kinds.right_choice(spec, at.step.expected)
            plotly_chart(st, choice_figure(spec.options, kinds.choice_counts(spec, values), right, "the plan's"),
                         key="lecture_class_choice")
        else:
            class_numbers(at, view, kinds.numbers(values))


def class_numbers(at, view, values: list[float]) -> None:
    """The class's numbers as a histogram, the right value marked: the one attnviz computes when the plan names a
    quantity (said under the chart), else the plan's expected number (labelled the plan's)."""

    try:
        truth = number_truth(view, at.step.answer)
    except AttnvizError as err:
        st.warning(f"The right value cannot be computed here: {err}", icon=":material/block:")
        truth = None
    if truth is not None:
        plotly_chart(st, number_figure(values, truth.value, "computed"), key="lecture_class_number")
        st.caption(f"The dashed green line marked ✓ right answer, {truth.value:.4g}, is computed now by attnviz: "
                   f"{truth.what}.")
        return
    right = kinds.right_number(at.step.expected)
    plotly_chart(st, number_figure(values, right, "the plan's"), key="lecture_class_number")
    if right is not None:
        st.caption(f"The dashed green line marked ✓ right answer is the plan's expected answer ({right:g}), written by "
                   "the lecturer, not computed.")


def class_vs_model(truth: TokenTruth, counts: list[int]) -> None:
    """Two rows over the same key tokens in the same order: the class's share of answers, the model's weights."""
    total = sum(counts)
    share = np.asarray(counts, dtype=np.float32) / max(total, 1)  # (n_keys,) 0 everywhere before any answer
    rows = np.stack([share, truth.row.astype(np.float32)])  # (2, n_keys)
    query = truth.tokens[truth.query]
    st.markdown(f"**The class ({total} answers) and the model ({truth.what}):** where does '{query}' (token "
                f"{truth.query}) look?")
    heatmap(rows, [f"class ({total})", "model"], list(truth.tokens), key="lecture_class_row",
            show_values=True, y_title="", axis_words=("row", "key token"), value_name=("share / weight", "value"))
    picked = ", ".join(f"'{truth.tokens[i]}' {c}" for i, c in enumerate(counts) if c)
    best = int(np.argmax(truth.row))
    st.caption(f"Top row: the class's share of answers per key token ({picked or 'no answers'}). Bottom row: the "
               f"model's attention weights of '{query}' ({truth.what}); its largest: '{truth.tokens[best]}' (token "
               f"{best}), {truth.row[best]:.2f}.")
