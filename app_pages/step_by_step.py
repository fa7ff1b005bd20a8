"""Step by step: one layer, one head, from the input X to the layer's output, then one query-key pair in numbers."""

import streamlit as st

import ui
from attnviz.draw.describe import model_input_embedding
from attnviz.lessons.step_by_step.figures import step_matrix
from attnviz.lessons.step_by_step.latex import (
    TOP_TERMS,
    dot_product_latex,
    mask_entry_latex,
    projection_gap_latex,
    scaled_latex,
    softmax_latex,
    step_cards,
    tex_text,
    vector_latex,
)
from attnviz.lessons.step_by_step.steps import head_steps, output_projection_gap, pair_detail
from ui.heatmap_widget import heatmap
from ui.token_link import follow_token, token_drawn

view = ui.open_page("Step by step: one head, from input to output",
                    "Follow one attention head through every step, matrix by matrix, then pick a query token and a key "
                    "token to see the arithmetic of their single weight. Blue = negative, red = positive, white = 0.",
                    waits_for_text="The steps appear", layer_heads="layer")


with ui.guard("The step-by-step page"):
    model, layer = view.model, view.layer
    res = view.run(keep=True)
    ui.run_notes(res)
    n = len(res.labels)

    top = st.columns([1, 3], vertical_alignment="bottom")
    head = top[0].selectbox("Head to follow", list(range(model.n_heads)), key="sbs_head", **ui.BOUND)
    steps = head_steps(model, res, layer, head)
    top[1].markdown(f"**{model.name}** · layer {layer}, head {head} of {model.n_heads} · **n = {n} tokens** · "
                    f"d_model = {model.d_model} · d_head = d_k = {model.d_head}"
                    + (f" · reads K/V head {steps.kv_head} of {steps.n_kv_heads} · RoPE" if steps.rope else ""))
    numbers = model.d_head <= 8 and n <= 24  # the toy model: numbers fit inside the cells
    labels = res.labels

    # a pair followed from the explorer comes first: the class came for it, not for the 5,000 px of matrices above it
    matrices_box, pair_box = ui.figure("chain"), ui.figure("pair")
    if st.query_params.get("sbs_focus") == "pair":
        matrices_box, pair_box = pair_box, matrices_box
    with matrices_box:
        # ---- 1) the matrices, step by step --------------------------------------------------------
        st.header("From X to the output")
        cards = step_cards(n, model.d_model, model.d_head, model.n_heads, head, steps.scale, steps.masked,
                           model.cfg.pre_ln, embedding=model_input_embedding(model), n_kv_heads=steps.n_kv_heads,
                           trained=model.source is not None)

        def draw(key: str) -> None:
            m = step_matrix(steps, key, numbers)
            heatmap(m.matrix, m.row_labels, m.col_labels, key=f"sbs_fig_{key}", title=m.title, kind=m.kind,
                    x_title=m.x_title, show_values=m.show_values, limit=m.limit)

        for number, card in enumerate(cards, start=1):
            st.subheader(f"{number}. {card.title}", divider="gray")
            if card.key == "qkv":
                st.markdown(card.text)
                st.latex(card.latex)
                st.latex(card.shape)
                for col, name in zip(st.columns(3), "QKV", strict=True):
                    with col:
                        draw(name)
                continue
            if card.key == "rope":
                st.markdown(card.text)
                st.latex(card.latex)
                st.latex(card.shape)
                for name in "QK":  # before and after the turn, side by side; the after ones are drawn under "qkv" too
                    cols = st.columns(2)
                    with cols[0]:
                        draw(f"{name}_before")
                    with cols[1]:
                        m = step_matrix(steps, name, numbers)
                        heatmap(m.matrix, m.row_labels, m.col_labels, key=f"sbs_fig_{name}_after", title=m.title,
                                kind=m.kind, x_title=m.x_title, show_values=m.show_values, limit=m.limit)
                continue
            left, right = st.columns([2, 3], vertical_alignment="center")
            left.markdown(card.text)
            left.latex(card.latex)
            left.latex(card.shape)
            with right:
                draw(card.key)
            if card.key == "masked" and steps.masked:
                left.caption("Grey cells marked −∞ are masked: the softmax turns them into weight exactly 0.")

    with pair_box:
        # ---- 2) one query, one key ----------------------------------------------------------------
        st.header("One query, one key")
        follow_token("sbs_query", labels, min(2, n - 1), "query", link_says=st.query_params.get("sbs_query"))
        follow_token("sbs_key", labels, min(1, n - 1), "key", link_says=st.query_params.get("sbs_key"))
        ui.clamp_token_choice("sbs_query", n, "query")
        ui.clamp_token_choice("sbs_key", n, "key")

        def name_of(t: int) -> str:
            return f"{t}: {labels[t]}" if 0 <= t < n else str(t)

        pick = st.columns(2)
        i = pick[0].selectbox("Query token i (the one looking)", list(range(n)), index=min(2, n - 1),
                              format_func=name_of, key="sbs_query", **ui.BOUND)
        token_drawn("sbs_query", labels)
        j = pick[1].selectbox("Key token j (the one looked at)", list(range(n)), index=min(1, n - 1),
                              format_func=name_of, key="sbs_key", **ui.BOUND)
        token_drawn("sbs_key", labels)
        pair = pair_detail(steps, i, j)
        prime = "'" if steps.rope else ""  # q' and k': after RoPE, the vectors the score really uses
        st.latex(vector_latex(rf"q{prime}_{{{i}}}\ {tex_text(labels[i])}", pair.q_i))
        st.latex(vector_latex(rf"k{prime}_{{{j}}}\ {tex_text(labels[j])}", pair.k_j))
        if steps.rope:
            st.caption(f"q′ and k′ are after RoPE: query {i} turned by its position {i}, key {j} by {j} (key from K/V head "
                       f"{steps.kv_head}). Their dot product is the model's score.")

        st.markdown("**The dot product** adds up the feature-by-feature products of the two vectors:")
        every = model.d_head <= 8
        st.latex(dot_product_latex(i, j, pair.q_i, pair.k_j, pair.dot, top=None if every else TOP_TERMS))
        if not every:
            st.caption(f"d_head = {model.d_head}: only the {TOP_TERMS} largest products (by size) are written out; "
                       f"the other {model.d_head - TOP_TERMS} are added up under the brace marked ⋯.")
        st.markdown("**Scaled**, **masked**, then the **softmax** of row i turns the score into a weight:")
        st.latex(scaled_latex(i, j, pair.dot, pair.scale, model.d_head))
        st.latex(mask_entry_latex(i, j, pair.allowed, pair.scaled))
        st.latex(softmax_latex(i, j, pair.row, pair.weight))

    # ---- 3) back to one output ----------------------------------------------------------------
    st.header("All heads together: Concat · W_O = Σ_h head_h · W_Oʰ")
    st.markdown(f"W_O's rows come in {model.n_heads} blocks of {model.d_head}, one block W_Oʰ per head, so "
                f"multiplying the concatenation by W_O is the same as letting each head project its own output "
                f"and adding the {model.n_heads} results. For query row {i}:")
    _, _, gap = output_projection_gap(steps, i)
    st.latex(projection_gap_latex(i, model.n_heads, gap))
    if gap < 1e-4:
        st.caption("A difference this small is float32 rounding: the two ways of computing agree.")
    else:
        st.warning(f"The two ways differ by {gap:.2e}, more than float32 rounding explains.", icon=":material/priority_high:")
ui.mark_drawn(view)
