"""Positions: attention alone sees a set; sinusoidal, learned and rotary positions give it the order."""

import streamlit as st

import ui
from attnviz.lessons.positions import encodings as enc
from attnviz.lessons.positions import figures as pf
from attnviz.lessons.positions import rope_demo as rd
from attnviz.lessons.positions.encodings import learned_positions_source, profile_sentence
from attnviz.lessons.positions.permutation import permutation_demo, what_breaks_it
from attnviz.lessons.step_by_step.figures import percentile_limit
from ui.charts import plotly_chart
from ui.heatmap_widget import heatmap
from ui.memo import shared
from ui.runs import model_for


@shared(max_entries=16)
def _permutation(spec: str, device: str, text: str, seed: int):
    return permutation_demo(model_for(spec, device), text, seed)


@shared(max_entries=8)
def _sinusoidal(n: int, d_model: int):
    pe = enc.sinusoidal_table(n, d_model)
    gram = enc.position_dot_products(pe)
    return pe, gram, enc.distance_profile(gram)


@shared(max_entries=8)
def _learned(spec: str, device: str, n: int, first: int):
    table = enc.learned_table(model_for(spec, device), n, first)
    gram = enc.position_dot_products(table)
    return table, gram, enc.distance_profile(gram)


def _pos_labels(n: int) -> list[str]:
    return [f"pos {i}" for i in range(n)]


view = ui.open_page("Positions: how attention learns word order",
                    "Attention compares every token with every other token, and nothing in that comparison says where a "
                    "token sits. This page shows that blind spot on a real run, then three ways of filling it: "
                    "sinusoidal and learned vectors added to the tokens, and rotary embeddings (RoPE) that turn the "
                    "queries and keys.")
model, spec = view.model, view.model_spec

# ---- 1 · the permutation demo ---------------------------------------------------------------------
st.header("1 · Without positions, attention sees a set")
st.markdown(
    "Shuffle the rows of Q, K and V the same way. Every score QKᵀ is still there, only moved to another row and "
    "column, and the softmax of a row does not care about the order of its entries. So each token gets the same "
    "output as before, just at its new place: the layer is **permutation-equivariant**, a function of a set of "
    "words. *Dog bites man* and *man bites dog* would look identical. Below, your text runs twice: once as "
    "typed, once with its words shuffled (specials such as [CLS] stay put). The shuffled run's rows and columns are "
    "put back in the original order and compared with the first run.")
with ui.guard("The permutation demo"):
    st.latex(r"\small " + pf.permutation_latex())

    pick = st.columns(3)
    seed = pick[0].number_input("Shuffle seed", 0, 10_000, 0, key="pos_seed",
                                help="Which shuffle; every seed moves the words.", **ui.BOUND)
    partner = "toy" if spec == "toy-nopos" else "toy-nopos"  # the model on screen first, then its counterpart
    results = [_permutation(s, view.device, view.text, int(seed)) for s in (spec, partner)]
    st.caption("Shuffled order: " + " ".join(results[0].shuffled_tokens))
    n_layers = min(r.attentions.shape[0] for r in results)
    n_heads = min(r.attentions.shape[1] for r in results)
    layer = pick[1].selectbox("Layer to compare", list(range(n_layers)), key="pos_layer", **ui.BOUND)
    head = pick[2].selectbox("Head to compare", list(range(n_heads)), key="pos_head", **ui.BOUND)
    diffs = [r.head_difference(layer, head) for r in results]  # each (T, T)
    limit = max(max(float(d.abs().max()) for d in diffs), 1e-3)  # one colour scale for both, so ≈0 stays white
    cols = ui.figure("shuffle").columns(len(results), gap="large")
    for i, (col, res) in enumerate(zip(cols, results, strict=True)):
        with col:
            st.subheader(res.model_name)
            labels = res.tokens
            # the map right under the model's name, the numbers and the verdict under it: on a projector the whole
            # map, its labels included, is on the first screen of the step that focuses it
            heatmap(diffs[i], labels, labels, key=f"pos_perm_diff_{i}", kind="signed", limit=limit,
                    title=f"L{layer} H{head}: weights − put-back weights")
            # each maximum says what it covers: the map's own (this layer and head) next to it, then the whole
            # model's, which a lecture quotes ("by up to 0.50") and which another head may hold
            n_l, n_h = res.attentions.shape[:2]
            st.metric(f"max |Δ| weights, this map (L{layer} H{head})", f"{float(diffs[i].abs().max()):.3g}",
                      help="the largest difference in the map above: this layer and head, every query and key")
            st.metric(f"max |Δ| weights, all {n_l} layers × {n_h} heads", f"{res.attention_difference:.3g}",
                      help="over every layer, head, query and key, after putting the shuffled rows back")
            st.metric("max |Δ| outputs, last layer", f"{res.output_difference:.3g}",
                      help="the last layer's output vectors (every token, every feature), rows put back")
            (st.success if res.equivariant() else st.warning)(what_breaks_it(res))
            with st.expander("both attention patterns"):
                heatmap(res.attentions[layer, head], labels, key=f"pos_perm_a_{i}",
                        title="weights after softmax, as typed")
                heatmap(res.attentions_back[layer, head], labels, key=f"pos_perm_b_{i}",
                        title="weights after softmax, shuffled run put back")
    st.caption(f"The difference maps share one colour scale, ±{limit:.2g}, so a model whose rows followed the "
               "shuffle stays white.")
    st.markdown(
        "For the model without positions the differences are float rounding (around 10⁻⁷). "
        "With positions, the shuffled words meet different position vectors, so the put-back run differs. "
        f"Choose **toy-nopos** in {ui.setting_place('model', 'model list')} to explore the rest of the app on a model "
        "that has no sense of order.")

# ---- 2 · sinusoidal ---------------------------------------------------------------------------------
st.header("2 · Sinusoidal positions (the original Transformer)")
st.markdown(
    "Add to each token a fixed vector that depends only on its position: pairs of columns hold a sine and a cosine "
    "of the position at one frequency, from fast (left) to very slow (right). No weights are learned, any length "
    "works, and the dot product of two position vectors is a sum of cosines of their distance alone: every "
    "diagonal of the right-hand matrix holds one value.")
with ui.guard("The sinusoidal part"):
    c = st.columns(2)
    n_pos = c[0].slider("Positions shown", 4, 128, 32, key="pos_n", **ui.BOUND)
    d_model = c[1].slider("d_model (even)", 4, 512, 64, step=2, key="pos_d", **ui.BOUND)
    pe, gram, prof = _sinusoidal(int(n_pos), int(d_model))
    st.latex(pf.sinusoidal_latex(int(d_model)))
    left, right = st.columns(2)
    with left:
        heatmap(pe, _pos_labels(n_pos), key="pos_sin_table", kind="signed", x_title="dimension",
                title=f"PE: {n_pos} positions × {d_model} dimensions")
    with right:
        heatmap(gram, _pos_labels(n_pos), _pos_labels(n_pos), key="pos_sin_gram", kind="signed", x_title="position j",
                title="PE_i·PE_j (dot products of positions)")
    st.latex(r"\small " + pf.sinusoidal_dot_latex())
    plotly_chart(st, pf.distance_profile_figure({"sinusoidal": prof}), width="stretch", key="pos_sin_profile")
    st.caption(profile_sentence(prof, "Sinusoidal") + " The chart starts at Δ = 1: Δ = 0 holds the squared lengths "
               f"({float(prof.mean[0]):.3g} for every sinusoidal position, d_model / 2).")

# ---- 3 · learned --------------------------------------------------------------------------------------
st.header("3 · Learned position embeddings (BERT, GPT-2)")
with ui.guard("The learned-positions part"):
    source, source_label = learned_positions_source(model)
    learned_spec = spec if source is not None else ""
    learned_model = model_for(learned_spec, view.device)
    st.markdown(
        "BERT and GPT-2 instead learn one vector per position, trained with the rest of the model: there is no "
        "formula, and nothing forces their dot products to depend on the distance only, or at all. The picture and "
        "the numbers below show what training made of them. " + source_label + ".")
    skip_first = st.checkbox("Leave out position 0", key="pos_skip0", **ui.BOUND,
                             help="In BERT-like models position 0 always holds [CLS], and its learned vector is much "
                                  "longer than the others: it dominates the colours and the spread.")
    first = int(skip_first)
    n_learned = min(int(n_pos), learned_model.embedder.position.shape[0] - learned_model.embedder.position_offset - first)
    table, lgram, lprof = _learned(learned_spec, view.device, n_learned, first)
    labels = [f"pos {first + i}" for i in range(n_learned)]
    left, right = st.columns(2)
    with left:
        heatmap(table, labels, key="pos_learned_table", kind="signed", x_title="dimension",
                limit=percentile_limit(table.numpy()), title=f"{n_learned} positions × {table.shape[1]} dimensions")
    with right:
        heatmap(lgram, labels, labels, key="pos_learned_gram", kind="signed",
                x_title="position j", limit=percentile_limit(lgram.numpy()),
                title="P_i·P_j (dot products of positions)")
    st.caption("Colours span ±99th percentile of |value| so that a few large entries do not wash out the rest; "
               "hover or tap a cell for its value.")
    plotly_chart(st, pf.distance_profile_figure({"learned " + learned_model.name: lprof}), width="stretch",
                    key="pos_learned_profile")
    st.caption(profile_sentence(lprof, f"Learned ({learned_model.name})"))

# ---- 4 · RoPE -----------------------------------------------------------------------------------------
st.header("4 · Rotary position embeddings (RoPE: Llama, Qwen, Mistral)")
st.markdown(
    "RoPE adds nothing to the tokens. It turns each query and key after the projection: their numbers are taken "
    "in pairs, and pair p at position t is rotated by the angle t·θ_p, fast for the first pairs and slow for the "
    "last. A rotation keeps lengths, and turning the query by i steps and the key by j steps leaves their dot "
    "product turned by j − i: the score sees how far apart two tokens are, not where they are.")
with ui.guard("The RoPE part"):
    rope = rd.rope_settings(model)
    (st.success if rope.from_model else st.info)(rope.label + ".")
    st.latex(r"\small " + pf.rope_latex(rope.theta, rope.d_head))
    c = st.columns(4)
    pair = c[0].slider("Pair p", 0, rope.d_head // 2 - 1, 0, key="pos_pair", **ui.BOUND)
    steps = c[1].slider("Positions shown, T (0 … T − 1)", 2, 32, 8, key="pos_steps", **ui.BOUND)
    n_table = c[2].slider("Score table size", 2, 24, 10, key="pos_table", **ui.BOUND)
    shift = c[3].slider("Shift s", 0, 100, 5, key="pos_shift", **ui.BOUND)
    q, k = rd.seeded_query_key(rope.d_head, int(seed))
    left, right = st.columns([3, 2])
    with left:
        plotly_chart(st, pf.pair_track_figure(rd.pair_track(q, pair, steps, rope.inv_freq), pair,
                                             rd.pair_angle_step(rope.d_head, pair, rope.inv_freq)),
                        width="stretch", key="pos_pair_track")
    right.markdown(
        f"The query's pair {pair}, (q[{pair}], q[{pair} + D/2]), placed at the T = {steps} positions 0 … {steps - 1}. "
        "Every point lies on the same circle: the rotation changes the direction, never the length. Low pairs spin fast and tell "
        "near neighbours apart; high pairs turn slowly and still differ across long distances.")
    if rope.from_model:
        with ui.guard("The model's own rotation"):
            res = view.run(keep=True)
            rot = rd.model_rotation(res, rope.inv_freq)
            st.subheader(f"{model.name}'s own queries, rotated inside the model")
            st.markdown(f"Query head 0 of layer 0 on your text: pair {pair} of each token's query before and "
                        "after the model's RoPE, as its forward pass kept them. The length of the pair does not change.")
            ui.table(st, rd.rotation_rows(rot, 0, 0, pair, rope.inv_freq), hide_index=True)
            st.metric("max |R(t)·q − the model's q after RoPE| (and the same for k), every layer, head and token",
                      f"{rot.gap:.2e}", help="the model's q and k before RoPE rotated here with the frequencies above, "
                      "compared with what its own forward pass produced")
    table_rope = rd.rope_score_table(q, k, int(n_table), rope.inv_freq)
    heatmap(table_rope, [f"q@{i}" for i in range(n_table)], [f"k@{j}" for j in range(n_table)],
            key="pos_rope_table", kind="signed", x_title="key position j", show_values=n_table <= 12,
            title="unscaled score (R_i q)·(R_j k): one q placed at i, one k placed at j")
    shifted = rd.rope_score_table(q, k, int(n_table) + int(shift), rope.inv_freq)
    i0, j0 = min(3, n_table - 1), min(1, n_table - 1)
    st.latex(r"\small " + pf.rope_score_latex(i0, j0, int(shift), float(table_rope[i0, j0]),
                                                float(shifted[i0 + shift, j0 + shift])))
    added = rd.added_positions_score_table(q, k, int(n_table))
    m = st.columns(3)
    m[0].metric(f"max |s(i,j) − s(i+{shift},j+{shift})|", f"{rd.shift_difference(q, k, n_table, shift, rope.inv_freq):.2e}",
                help="over every i, j in the table: the same q and k moved s places further along")
    m[1].metric("RoPE: diagonal spread", f"{rd.diagonal_spread(table_rope):.2e}",
                help="the largest max − min along any diagonal j − i = const of the table: one value per diagonal, "
                     "up to float rounding")
    m[2].metric("sinusoids added: spread", f"{rd.diagonal_spread(added):.3g}",
                help="the same measure for (q + PE_i)·(k + PE_j), positions added instead of rotated: the cross terms "
                     "q·PE_j and PE_i·k depend on where the tokens sit, not only on i − j")
    st.caption(f"q and k: {rope.d_head} numbers each from N(0, 1), seed {int(seed)} (the shuffle seed above). "
               "Scores unscaled (no 1/√d_k), no softmax: just the dot products.")
ui.mark_drawn(view)
