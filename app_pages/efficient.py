"""Efficient attention: a faster or leaner method beside exact attention, its error, and its measured cost."""

import streamlit as st

import ui
from attnviz.lessons.efficient.compare import MAX_PATTERN_N, compare, random_qkv
from attnviz.lessons.efficient.costs import MAX_COST_N, cost_ns, exact_costs, method_costs, overtakes_at, ratio_words
from attnviz.lessons.efficient.explain import cost_sentence
from attnviz.lessons.efficient.figures import cost_figure
from attnviz.lessons.efficient.method import cap_knobs, knob_default, timing_knobs, timing_notes
from attnviz.lessons.efficient.methods import METHODS
from ui import heatmap_widget as _heatmap
from ui.charts import plotly_chart
from ui.memo import shared


@shared(max_entries=4)
def _exact_costs(ns: tuple[int, ...]):
    return exact_costs(list(ns))


@shared(max_entries=16)
def _method_costs(method_key: str, knobs: tuple, ns: tuple[int, ...]):
    return method_costs(METHODS[method_key], dict(knobs), list(ns))


def _named(exact: bool) -> str:
    """'flash, window, longformer, block-sparse': the registered methods that are (or are not) exact."""
    return ", ".join(m.key for m in METHODS.values() if m.exact == exact)


view = ui.open_page("Efficient attention",
                    "Exact attention scores every (query, key) pair: n² of them. Each method below avoids that in its "
                    f"own way. The exact kernels ({_named(True)}) give the same numbers as exact attention with their "
                    f"mask, but skip the work; the approximations ({_named(False)}) change the math.")

with ui.guard("The efficient attention page"):
    top = st.columns([2, 3])
    method = METHODS[top[0].selectbox("Method", list(METHODS), key="eff_method", **ui.BOUND,
                                      help="\n".join(f"- **{m.key}**: {m.title}" for m in METHODS.values()))]
    source = top[1].radio("Q, K, V from", ["model", "random"], key="eff_source", horizontal=True,
                          help="model: the model and text set for every page; random: entries from N(0, 1)", **ui.BOUND)
    st.info(f"**{method.title}. What it trades:** {method.trade}", icon=":material/balance:")

    knob_cols = st.columns(max(len(method.knobs) + len(method.switches), 3))
    raw = {}  # the knobs' widgets are drawn into knob_cols once n is known, below; the switches now
    for j, switch in enumerate(method.switches):
        raw[switch.key] = knob_cols[len(method.knobs) + j].radio(
            switch.label, list(switch.options), key=f"eff_{switch.key}", horizontal=True, help=switch.help, **ui.BOUND)

    if source == "model":
        view, head = ui.page.layer_and_head("eff_head", "The comparison appears")
        model, layer = view.model, view.layer
        res = view.run(keep=True)
        ui.run_notes(res)
        trace = res.traces[layer]
        q, k, v = trace.q[0, head], trace.k[0, head], trace.v[0, head]  # (n, d_head) each
        scale, labels = trace.scale, list(res.labels)
        where = f"{model.name}, layer {layer}, head {head}: Q, K, V as the model computed them for your text"
    else:
        row = st.columns(3)
        n_asked = row[0].number_input("n (tokens)", 1, 1_000_000, 24, key="eff_n", **ui.BOUND)
        d = row[1].number_input("d (head size)", 1, 256, 16, key="eff_d", **ui.BOUND)
        seed = row[2].number_input("Seed", 0, 10_000, 0, key="eff_seed", **ui.BOUND)
        q, k, v = random_qkv(min(int(n_asked), MAX_PATTERN_N), int(d), int(seed))
        scale, labels = None, [str(i) for i in range(q.shape[0])]
        if n_asked > MAX_PATTERN_N:
            st.warning(f"n = {n_asked:,} is more than the {MAX_PATTERN_N} tokens drawn as heatmaps: capped to "
                       f"{MAX_PATTERN_N}. The cost chart below goes up to n = {MAX_COST_N:,}.", icon=":material/content_cut:")
        where = f"random Q, K, V with entries from N(0, 1): n = {q.shape[0]}, d = {d}, seed {seed}"
    if q.shape[0] > MAX_PATTERN_N:
        st.warning(f"The text has {q.shape[0]} tokens; the patterns use the first {MAX_PATTERN_N}.",
                   icon=":material/content_cut:")
        q, k, v, labels = q[:MAX_PATTERN_N], k[:MAX_PATTERN_N], v[:MAX_PATTERN_N], labels[:MAX_PATTERN_N]
    n = q.shape[0]
    for i, kn in enumerate(method.knobs):  # drawn now that n is known: their choices and defaults depend on it
        if kn.choices is not None:
            options, _ = kn.choices(n)
            raw[kn.key] = knob_cols[i].selectbox(kn.label, options, index=options.index(knob_default(kn, n)),
                                                 key=f"eff_{method.key}_{kn.key}", **ui.BOUND)
        else:
            raw[kn.key] = knob_cols[i].number_input(kn.label, value=knob_default(kn, n), step=1,
                                                    key=f"eff_{method.key}_{kn.key}", **ui.BOUND)
    knobs, notes = cap_knobs(method, raw, n)
    for note in notes:
        st.warning(note, icon=":material/tune:")

    st.header(f"{method.title} on {n} tokens")
    st.caption(where + ".")
    cmp = compare(method, q, k, v, knobs, scale)
    reference = {"full": "exact attention", "masked": "exact attention with the same mask (dense, −∞)",
                 "shared-qk": "exact shared-QK attention (keys = Q / ‖Q‖)"}[method.reference]
    metrics = st.columns(3)
    metrics[0].metric("‖out − exact‖ / ‖exact‖", f"{cmp.output_error:.2e}",
                      help=f"relative error of the output against {reference}, on the real V")
    metrics[1].metric("max |Δ weight|", f"{cmp.max_weight_delta:.2e}", help="largest weight difference, drawn right")
    metrics[2].metric("error against full attention", f"{cmp.full_error:.2e}",
                      help="the output against unmasked exact attention: what the pattern itself changes")
    st.markdown(f"Measured against **{reference}**. " + (
        "This kernel is exact: the error is float rounding only." if method.exact else
        "This method is an approximation: the error is what it gives up."))
    signed_method = method.signed(knobs)
    values = n <= 10  # numbers in the cells only while they fit
    left, right = st.columns(2, gap="medium")
    with left:
        _heatmap.heatmap(cmp.reference_weights, labels, key="eff_reference", show_values=values,
                         title={"full": "exact", "masked": "exact, same mask", "shared-qk": "exact shared-QK"}[method.reference]
                         + ": weights")
    with right:
        _heatmap.heatmap(cmp.method_weights, labels, labels, key="eff_method_weights", show_values=values,
                         kind="signed" if signed_method else "weights",
                         title=f"{method.key}: weights it applies" + (" (can be < 0)" if signed_method else ""))
    left, right = st.columns(2, gap="medium")
    with left:
        _heatmap.heatmap(cmp.weight_delta.abs(), labels, labels, key="eff_delta", kind="magnitude", bytes_per_cell=4,
                         limit=max(cmp.max_weight_delta, 0.01),
                         title="|Δ| = |method − reference| (weights)")
    with right:
        st.markdown("**Reading the three maps.** Top left, the weights the method is measured against; top right, the "
                    "weights the method really applies, read off its own code by running it with V = I (every method "
                    "here is linear in V, so its output with V = I is its weight matrix). Bottom left, |Δ| on a scale of "
                    f"0 to {max(cmp.max_weight_delta, 0.01):.2g}: white means the method agrees with the reference.")

    st.header("What it costs, measured here")
    asked_n = st.number_input("Largest n to time", 128, 1_000_000, 1024, key="eff_max_n", **ui.BOUND,
                              help=f"Dense exact attention at n holds about 3·n²·4 bytes: capped at n = {MAX_COST_N:,} "
                                   "on this machine.")
    ns, capped = cost_ns(int(asked_n))
    if capped:
        st.warning(f"n = {asked_n:,} is too large for this machine (exact attention would hold about "
                   f"{3 * asked_n * asked_n * 4 / 1e9:,.1f} GB of scores): capped at n = {MAX_COST_N:,}.",
                   icon=":material/memory:")
    timing = tuple(sorted((key, val) for key, val in knobs.items()))
    with st.spinner(f"Timing exact attention and {method.key} at n = {', '.join(map(str, ns))} in this process (cached)…"):
        exact_pts = _exact_costs(tuple(ns))
        method_pts = _method_costs(method.key, timing, tuple(ns))
    charts = st.columns(2)
    for col, field in zip(charts, ("seconds", "peak_bytes"), strict=True):
        plotly_chart(col, cost_figure(exact_pts, method_pts, method.key, field), width="stretch", key=f"eff_cost_{field}")
    said = []  # (what it is from n = at on, what it is when it never gets there)
    for field, better, never in (("seconds", "is faster than exact attention", "is not faster than exact attention"),
                                 ("peak_bytes", "needs less peak memory", "never needs less peak memory")):
        at = overtakes_at(method_pts, exact_pts, field)
        said.append(f"{better} from n = {at}" if at else f"{never} at any n up to {ns[-1]}")
    last_m, last_e = method_pts[-1], exact_pts[-1]
    st.markdown(f"**{method.key}** {said[0]}, and {said[1]}. At n = {last_e.n}: "
                f"{last_m.seconds * 1e3:.1f} ms against {last_e.seconds * 1e3:.1f} ms "
                f"({ratio_words(last_e.seconds, last_m.seconds, 'faster', 'slower')}), {last_m.peak_bytes / 1e6:.2f} MB "
                f"against {last_e.peak_bytes / 1e6:.2f} MB "
                f"({ratio_words(last_e.peak_bytes, last_m.peak_bytes, 'less memory', 'more memory')}).")
    st.markdown(cost_sentence(method, timing_knobs(method, knobs, ns[-1]), method_pts, exact_pts))
    st.caption("Random Q, K, V, one head, d = 64, this page's own process. Time: the fastest of up to 3 runs after "
               "a warm-up, on one CPU thread (the machine may be shared, so times wobble). Peak memory: the most "
               "bytes of torch tensors held at once, counted op by op as they are allocated and freed (inputs not "
               "counted); tracemalloc cannot see torch's memory."
               + "".join(f" {note}" for note in timing_notes(method)))
ui.mark_drawn(view)
