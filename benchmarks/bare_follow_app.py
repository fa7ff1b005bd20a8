"""The floor for a follower (benchmarks/bench_class_follow.py --floor): a bare Streamlit script whose one fragment
draws a lecture step's bar, its question, an answer box and a line, and is rerun by a watcher when the room changes
(benchmarks/bare_follow_wake.py), with no page, no figure and no store behind it: what Streamlit itself costs to
redraw a few elements on a follower's phone when the room moves."""

import streamlit as st
from bare_follow_wake import follow, state

OPTIONS = ["none", "causal", "window"]


@st.fragment
def follower() -> None:
    now = state()
    follow(now)
    step, revealed = now["step"], now["step"] in now["revealed"]
    room = st.query_params.get("room", "FLOOR")
    st.html(f'<div class="bar"><b>Step {step} of 5</b> · a step of the lecture</div>')
    st.markdown("**Question.** Which mask lets a token see only the tokens before it?")
    picked = st.pills("Your answer", OPTIONS, key=f"lecture_answer_{room}_{step}", label_visibility="collapsed",
                      disabled=revealed)
    if picked:
        st.success(f"Your answer is in: {picked}. You can change it until the lecturer reveals.")
    st.caption("The class's answers are shown." if revealed else "The figures appear when the lecturer reveals them.")


follower()
