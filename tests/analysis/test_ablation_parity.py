"""Ablation and contribution norms against hand computations.

The hand computation of an ablation is transformers' own model, with a pre-hook on its output projection (BERT's
attention.output.dense, Llama's o_proj) that zeroes (or sets to a given vector) the ablated heads' slices of its
input: nothing of attnviz's forward is used. Compared at the residual stream after every layer.
"""

import pytest
import torch
import transformers

import attnviz
from attnviz.analysis.ablation import (
    ablated_forward,
    check_heads,
    clean_run,
    clean_streams,
    head_ablation,
    mean_head_outputs,
)
from attnviz.analysis.ablation_effects import (
    closeness_in,
    coreference_closeness,
    embedding_cosines,
    embedding_sweep,
    mean_pooled,
    pooled_embeddings,
)
from attnviz.analysis.contribution import (
    contribution_norms,
    shares_to_keys,
    special_keys,
    value_vector_norms,
)
from attnviz.analysis.corpus import encode_corpus, load_corpus
from attnviz.analysis.corpus_shares import corpus_special_shares
from attnviz.analysis.repeats import repeated_random_batch
from attnviz.engine.models.stack import norm
from attnviz.errors import AttnvizError

ATOL = 1e-5


@pytest.fixture(scope="module")
def minilm_pair():
    model = attnviz.load_model()
    hf = transformers.AutoModel.from_pretrained(model.source, attn_implementation="eager", dtype=torch.float32).eval()
    return model, hf, [layer.attention.output.dense for layer in hf.encoder.layer]


@pytest.fixture(scope="module")
def llama_pair():
    model = attnviz.load_model("attnviz-tiny-llama")
    hf = transformers.AutoModelForCausalLM.from_pretrained(model.source, attn_implementation="eager",
                                                           dtype=torch.float32).eval()
    return model, hf, [layer.self_attn.o_proj for layer in hf.model.layers]


def corpus_batch(model, n=5):
    corpus = load_corpus()
    few = type(corpus)(corpus.name, corpus.sentences[:n])
    return encode_corpus(model, few)


def hf_hidden_states(hf, projections, ids, attention_mask, heads, d_head, values=None):
    """transformers' residual stream after every layer, with the heads' slices of W_O's input replaced by hand:
    zeros, or values[(layer, head)] (a (d_head,) vector) at every position."""
    def replacer(layer):
        def hook(_module, args):
            x = args[0].clone()  # (B, T, nh·hs): Concat(head_1 .. head_nh) before W_O
            for lay, h in heads:
                if lay == layer:
                    x[..., h * d_head:(h + 1) * d_head] = 0.0 if values is None else values[(lay, h)]
            return (x,)
        return hook

    handles = [p.register_forward_pre_hook(replacer(layer)) for layer, p in enumerate(projections)]
    try:
        with torch.no_grad():
            out = hf(ids, attention_mask=attention_mask.long(), output_hidden_states=True)
    finally:
        for handle in handles:
            handle.remove()
    return out.hidden_states


def assert_layers_match(model, traces, states, real, final_normed):
    """Our residual stream after each layer == transformers', at the real tokens, to 1e-5. Compared on the CPU:
    transformers' model runs there, ours on the model's device (a GPU when there is one)."""
    L = model.n_layers
    real = real.cpu()
    for layer in range(L):
        ours = traces[layer].x_out
        theirs = states[layer + 1]
        if final_normed and layer == L - 1:  # transformers' last hidden state is after the final norm
            ours = norm(ours, model.final_ln[0], model.final_ln[1], model.cfg)
        torch.testing.assert_close(ours.cpu()[real], theirs.cpu()[real], atol=ATOL, rtol=0)


@pytest.mark.parametrize("heads", [[(0, 3)], [(1, 0), (4, 7), (5, 11)], [(2, h) for h in range(12)]],
                         ids=["one", "three-layers", "whole-layer"])
def test_zero_ablation_equals_transformers_with_heads_zeroed_minilm(minilm_pair, heads):
    model, hf, projections = minilm_pair
    batch = corpus_batch(model)
    _, _, traces = ablated_forward(model, batch.ids, batch.mask, heads, "zero", keep=True)
    states = hf_hidden_states(hf, projections, batch.ids, batch.real, heads, model.d_head)
    assert_layers_match(model, traces, states, batch.real, final_normed=False)
    # and the ablation did something: the unablated stream differs from it after the first ablated layer
    _, _, clean = ablated_forward(model, batch.ids, batch.mask, (), keep=True)
    assert (clean[-1].x_out - traces[-1].x_out).abs().max() > 1e-3


@pytest.mark.parametrize("heads", [[(1, 0), (1, 1)], [(0, 2)], [(0, 0), (0, 1), (1, 3)]])
def test_zero_ablation_equals_transformers_with_heads_zeroed_tiny_llama(llama_pair, heads):
    model, hf, projections = llama_pair
    batch = repeated_random_batch(model, n_seqs=4, half=12, seed=3)
    T = batch.ids.shape[1]
    _, _, traces = ablated_forward(model, batch.ids, model.builtin_mask(T), heads, "zero", keep=True)
    real = torch.ones_like(batch.ids, dtype=torch.bool)
    states = hf_hidden_states(hf, projections, batch.ids, real, heads, model.d_head)
    assert_layers_match(model, traces, states, real, final_normed=True)


def test_mean_ablation_equals_transformers_with_the_mean_put_in(minilm_pair):
    model, hf, projections = minilm_pair
    batch = corpus_batch(model)
    means = mean_head_outputs(model, batch.ids, batch.mask, batch.real)  # (L, H, hs)
    assert means.shape == (model.n_layers, model.n_heads, model.d_head)
    heads = [(1, 4), (3, 0)]
    _, _, traces = ablated_forward(model, batch.ids, batch.mask, heads, "mean", means, keep=True)
    states = hf_hidden_states(hf, projections, batch.ids, batch.real, heads, model.d_head,
                              values={pair: means[pair] for pair in heads})
    assert_layers_match(model, traces, states, batch.real, final_normed=False)


def test_mean_is_the_mean_of_the_heads_outputs_over_real_tokens(minilm_pair):
    model, _, _ = minilm_pair
    batch = corpus_batch(model, 3)
    means = mean_head_outputs(model, batch.ids, batch.mask, batch.real)
    _, _, traces = ablated_forward(model, batch.ids, batch.mask, (), keep=True)
    outputs = traces[2].head_outputs[:, 5].cpu()  # (B, T, hs), from the model's device
    torch.testing.assert_close(means[2, 5].cpu(), outputs[batch.real.cpu()].mean(0), atol=1e-6, rtol=0)


@pytest.mark.parametrize("which", ["minilm", "llama"])
def test_no_ablation_is_the_plain_forward_bit_for_bit(minilm_pair, llama_pair, which):
    model = (minilm_pair if which == "minilm" else llama_pair)[0]
    batch = corpus_batch(model) if which == "minilm" else repeated_random_batch(model, 3, 10, 0)
    mask = batch.mask if which == "minilm" else model.builtin_mask(batch.ids.shape[1])
    with torch.inference_mode():
        plain_hidden, plain_weights, _ = model.forward(batch.ids, mask, True, False)
        empty_plan_hidden, _, _ = model.forward(batch.ids, mask, True, False, head_ablation={})
    hidden, weights, _ = ablated_forward(model, batch.ids, mask, ())
    assert torch.equal(hidden, plain_hidden) and torch.equal(empty_plan_hidden, plain_hidden)
    assert all(torch.equal(a, b) for a, b in zip(weights, plain_weights, strict=True))


def test_ablation_leaves_the_weights_and_earlier_layers_alone(minilm_pair):
    model, _, _ = minilm_pair
    batch = corpus_batch(model, 2)
    _, _, clean = ablated_forward(model, batch.ids, batch.mask, (), keep=True)
    _, _, knocked = ablated_forward(model, batch.ids, batch.mask, [(3, 2)], keep=True)
    for layer in range(3):
        assert torch.equal(clean[layer].x_out, knocked[layer].x_out)
    assert torch.equal(clean[3].weights, knocked[3].weights)  # the weights are computed, only the output goes
    assert torch.equal(knocked[3].head_outputs[:, 2], torch.zeros_like(knocked[3].head_outputs[:, 2]))


@pytest.mark.parametrize("bad, message", [
    ([], "at least one head"),
    ([(6, 0)], "no layer 6, head 0"),
    ([(0, 12)], "heads 0 to 11"),
    ([(0, -1)], "no layer 0, head -1"),
    ([(0,)], "not a (layer, head) pair"),
    ([("0", 1)], "not a (layer, head) pair"),
    (5, "(layer, head) pairs"),
])
def test_bad_head_sets_get_a_clear_message(minilm_pair, bad, message):
    with pytest.raises(AttnvizError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_heads(minilm_pair[0], bad)


def test_mean_ablation_without_means_and_an_unknown_kind_are_refused(minilm_pair):
    model = minilm_pair[0]
    with pytest.raises(AttnvizError, match="mean outputs"):
        head_ablation(model, ((0, 0),), "mean")
    with pytest.raises(AttnvizError, match="'zero' or 'mean'"):
        head_ablation(model, ((0, 0),), "half")


# ---- contribution norms ‖α_ij · (x_j W_V + b_V) W_O^h‖ ------------------------------------------------------------


def hand_norm(model, trace, layer, head, i, j, b=0):
    """‖α_ij (x_j W_V^h + b_V^h) W_O^h‖ from the layer's input, its weights and the stored parameters alone."""
    lw = model.layers[layer]
    x = trace.x_in[b].to(model.device)  # (T, C) the residual stream entering the layer (a run keeps it on the CPU)
    if model.cfg.pre_ln:
        x = norm(x, lw.ln1_w, lw.ln1_b, model.cfg)  # with the layer's parameters, on the model's device
    x = x.cpu()  # the rest on the CPU, where per_head_weights gives W_V and W_O
    w = model.per_head_weights(layer)  # W_V [nh, C, hs] (shared within a GQA group), W_O [nh, hs, C]
    nh, nkv, hs = model.n_heads, model.n_kv_heads, model.d_head
    kv = head // (nh // nkv)
    b_v = 0.0 if lw.b_qkv is None else lw.b_qkv[(nh + nkv) * hs + kv * hs:(nh + nkv) * hs + (kv + 1) * hs].cpu()
    value = x[j] @ w["W_V"][head].cpu() + b_v  # (hs,)
    alpha = float(trace.weights[b, head, i, j])
    return float(torch.linalg.vector_norm(alpha * (value @ w["W_O"][head].cpu())))


@pytest.mark.parametrize("which", ["minilm", "llama"])
def test_contribution_norms_equal_the_hand_computation(minilm_pair, llama_pair, which):
    model = (minilm_pair if which == "minilm" else llama_pair)[0]
    res = model.run("The trophy didn't fit in the suitcase because it was too big.", keep=True)
    n = len(res.tokens)
    for layer in range(model.n_layers):
        norms = contribution_norms(model, res.traces, layer)  # (1, nh, T, T)
        assert norms.shape == (1, model.n_heads, n, n)
        for head, i, j in [(0, n - 1, 0), (model.n_heads - 1, n // 2, n // 2 - 1), (1, 3, 2)]:
            assert float(norms[0, head, i, j]) == pytest.approx(hand_norm(model, res.traces[layer], layer, head, i, j),
                                                                abs=1e-5, rel=1e-5)
    if which == "llama":  # causal: a key after the query adds nothing
        assert float(contribution_norms(model, res.traces, 1)[0, :, 2, 5].abs().max()) == 0.0


def test_value_norms_head_by_head_equal_the_broadcast_product_to_the_bit(minilm_pair):
    """value_vector_norms takes one head at a time (2.5× faster over the corpus, a 12th of the memory): the numbers of
    the broadcast (B, nh, S, hs) @ (1, nh, hs, C) it replaced, to the bit, so the page's corpus shares did not move."""
    model = minilm_pair[0]
    batch = encode_corpus(model, load_corpus().subset(range(40)))
    _, _, traces = ablated_forward(model, batch.ids, batch.mask, (), keep=True)
    for layer in range(model.n_layers):
        v = traces[layer].v.float()  # (B, nh, S, hs)
        broadcast = (v @ model.per_head_weights(layer)["W_O"].to(v)[None]).norm(dim=-1)  # (B, nh, S)
        assert torch.equal(value_vector_norms(model, traces, layer), broadcast)


def test_value_norms_need_a_kept_run(minilm_pair):
    model = minilm_pair[0]
    with pytest.raises(AttnvizError, match="keep=True"):
        value_vector_norms(model, model.run("A short text.").traces, 0)
    with pytest.raises(AttnvizError, match="no layer 9"):
        value_vector_norms(model, model.run("A short text.", keep=True).traces, 9)


def test_shares_count_the_chosen_keys():
    weights = torch.tensor([[[[0.5, 0.5, 0.0], [0.25, 0.25, 0.5]]]])  # (1, 1, 2, 3)
    norms = torch.tensor([[[[0.1, 0.3, 0.0], [0.1, 0.1, 0.8]]]])
    weight_share, norm_share = shares_to_keys(weights, norms, torch.tensor([True, False, False]))
    assert float(weight_share[0]) == pytest.approx(0.75 / 2)
    assert float(norm_share[0]) == pytest.approx(0.2 / 1.4)
    assert special_keys(["[CLS]", "it", ",", "was", "[SEP]"]).tolist() == [True, False, True, False, True]


@pytest.mark.parametrize("which", ["minilm", "llama"])
def test_resuming_from_a_kept_stream_equals_the_whole_forward(minilm_pair, llama_pair, which):
    """The sweep's shortcut: starting at layer l from the clean stream entering it gives the whole ablated run."""
    model = (minilm_pair if which == "minilm" else llama_pair)[0]
    batch = corpus_batch(model) if which == "minilm" else repeated_random_batch(model, 3, 10, 0)
    mask = batch.mask if which == "minilm" else model.builtin_mask(batch.ids.shape[1])
    _, _, traces = ablated_forward(model, batch.ids, mask, (), keep=True)
    layer = model.n_layers - 1
    plan = head_ablation(model, ((layer, 1),), "zero")
    whole, _, _ = ablated_forward(model, batch.ids, mask, [(layer, 1)])
    with torch.inference_mode():
        resumed, weights, _ = model.forward(batch.ids, mask, True, False, head_ablation=plan,
                                            resume=(layer, traces[layer].x_in))
    assert len(weights) == 1
    torch.testing.assert_close(resumed, whole, atol=1e-6, rtol=0)


@pytest.mark.parametrize("which", ["minilm", "llama"])
@pytest.mark.parametrize("kind", ["zero", "mean"])
def test_an_ablated_forward_from_the_clean_streams_equals_the_whole_one(minilm_pair, llama_pair, which, kind):
    """ablated_forward(..., streams=): a set's forward starts at its lowest layer (the Head claims comparisons):
    the same final hidden as from the embeddings, for sets whose lowest layer is the first, a middle and the last."""
    model = (minilm_pair if which == "minilm" else llama_pair)[0]
    batch = corpus_batch(model) if which == "minilm" else repeated_random_batch(model, 3, 10, 0)
    mask = batch.mask if which == "minilm" else model.builtin_mask(batch.ids.shape[1])
    means = mean_head_outputs(model, batch.ids, mask, torch.ones_like(batch.ids, dtype=torch.bool))
    streams = clean_streams(model, batch.ids, mask)
    assert len(streams) == model.n_layers
    last = model.n_layers - 1
    for heads in [[(0, 1)], [(1, 0), (last, 1)], [(last, 0)]]:
        whole, _, _ = ablated_forward(model, batch.ids, mask, heads, kind, means)
        started, weights, _ = ablated_forward(model, batch.ids, mask, heads, kind, means, streams=streams)
        assert len(weights) == model.n_layers - min(layer for layer, _ in heads)  # the layers below were not run
        torch.testing.assert_close(started, whole, atol=1e-6, rtol=0)
    plain, _, _ = ablated_forward(model, batch.ids, mask, (), streams=streams)  # nothing ablated: from the start
    torch.testing.assert_close(plain, ablated_forward(model, batch.ids, mask, ())[0], atol=0, rtol=0)


def test_one_kept_clean_run_gives_what_the_separate_forwards_give(minilm_pair):
    """Head claims' outcome reads the clean model once (clean_run): its pooled embeddings, the heads' means, the
    streams and the pronoun's closeness equal, to the bit, those of a forward each (four before 2026-11-27)."""
    model = minilm_pair[0]
    corpus = load_corpus().subset(range(8))
    batch = encode_corpus(model, corpus)
    run = clean_run(model, batch.ids, batch.mask)
    assert torch.equal(mean_pooled(run.hidden, batch.real).float().cpu(), pooled_embeddings(model, batch))
    assert torch.equal(run.head_means(batch.real), mean_head_outputs(model, batch.ids, batch.mask, batch.real))
    assert all(torch.equal(a, b) for a, b in zip(run.streams, clean_streams(model, batch.ids, batch.mask), strict=True))
    assert closeness_in(run.hidden, corpus) == coreference_closeness(model, corpus, batch)


def test_the_embedding_sweep_equals_one_knock_out_at_a_time(minilm_pair):
    model = minilm_pair[0]
    batch = corpus_batch(model, 4)
    sweep = embedding_sweep(model, batch)
    assert sweep.shape == (6, 12) and bool((sweep > 0).all())
    for layer, head in [(0, 0), (3, 7), (5, 11)]:
        expected = 1 - float(embedding_cosines(model, batch, [(layer, head)]).mean())
        assert float(sweep[layer, head]) == pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("kind", ["zero", "mean"])
def test_the_sweeps_knock_outs_together_equal_one_at_a_time_to_the_bit(minilm_pair, kind):
    """embedding_sweep knocks out a layer's heads in copies of the batch, one forward for several: each value is the
    one a knock-out of its own gives (ablated_forward from the clean streams, as the sweep did one by one before)."""
    model = minilm_pair[0]
    batch = corpus_batch(model, 5)
    run = clean_run(model, batch.ids, batch.mask)
    means = run.head_means(batch.real) if kind == "mean" else None
    clean = mean_pooled(run.hidden, batch.real)
    sweep = embedding_sweep(model, batch, kind, means)
    for layer in range(model.n_layers):
        for head in (0, 5, 11):
            cos = embedding_cosines(model, batch, [(layer, head)], kind, means, clean, run.streams)
            assert float(sweep[layer, head]) == float(1 - cos.mean()), (layer, head)


def test_corpus_shares_from_the_runs_value_norms_equal_those_from_kept_traces(minilm_pair):
    """The corpus run keeps ‖(x W_V + b_V) W_O^h‖ per key; weights × those norms are contribution_norms of a traced
    run, so the shares over the corpus equal the ones counted from the traces."""
    model = minilm_pair[0]
    corpus = load_corpus()
    few = corpus.subset(range(6))
    weight_share, norm_share = corpus_special_shares(model, few)  # (L, H)
    batch = encode_corpus(model, few)
    _, _, traces = ablated_forward(model, batch.ids, batch.mask, (), keep=True)
    keys = torch.zeros_like(batch.real)
    for b, s in enumerate(few.sentences):
        keys[b, :len(s.tokens)] = special_keys(list(s.tokens))
    for layer in (0, 5):
        w, n = shares_to_keys(traces[layer].weights, contribution_norms(model, traces, layer), keys, batch.real)
        torch.testing.assert_close(weight_share[layer].cpu(), w.cpu(), atol=1e-5, rtol=0)  # traces: on the device
        torch.testing.assert_close(norm_share[layer].cpu(), n.cpu(), atol=1e-5, rtol=0)
