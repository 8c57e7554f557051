import pytest
import torch

from symgen.errors import UserError
from symgen.models.attention import CopyAttention, KVCache, apply_rotary, rotary_tables
from symgen.models.generate import generate
from symgen.models.transformer import ModelConfig, Transformer


def make(**kw) -> Transformer:
    torch.manual_seed(0)
    base = dict(vocab_size=40, d_model=32, n_heads=4, n_layers=2, max_seq_len=24)
    return Transformer(ModelConfig(**(base | kw))).eval()


@pytest.mark.parametrize("positions", ["learned", "rotary", "none"])
@pytest.mark.parametrize(
    "extra",
    [{}, {"copy_layers": [1], "n_loops": 2, "tied": False}, {"identity_bias": 3.0, "copy_layers": [1]}],
)
def test_kv_cache_and_left_padding_match_a_full_forward(positions, extra):
    model = make(positions=positions, **extra)
    ids = torch.randint(0, 40, (3, 12))
    full = model(ids).logits
    cache = KVCache()
    pieces = [model(ids[:, :5], cache=cache).logits]
    for t in range(5, 12):
        pieces.append(model(ids[:, t : t + 1], cache=cache).logits)
    assert torch.allclose(torch.cat(pieces, 1), full, atol=1e-5)
    padded = torch.cat([torch.zeros(3, 4, dtype=torch.long), ids], 1)
    mask = torch.cat([torch.zeros(3, 4, dtype=torch.bool), torch.ones(3, 12, dtype=torch.bool)], 1)
    assert torch.allclose(model(padded, mask).logits[:, 4:], full, atol=1e-5)


def test_partial_rotary_leaves_the_lowest_frequencies_comparing_content_only():
    q, k = torch.randn(1, 1, 1, 16), torch.randn(1, 1, 1, 16)

    def score(fraction: float, qpos: int, kpos: int) -> tuple[float, float]:
        """Query-key product at the given positions, in the rotated and the unrotated pairs."""
        tables = [rotary_tables(torch.tensor([[p]]), 16, fraction) for p in (qpos, kpos)]
        qr, kr = apply_rotary(q, tables[0]), apply_rotary(k, tables[1])
        pairs = (qr * kr).view(2, 8)  # dim i pairs with dim i + 8
        return float(pairs[:, :4].sum()), float(pairs[:, 4:].sum())

    rotated_near, content_near = score(0.5, 3, 2)
    rotated_far, content_far = score(0.5, 40, 2)
    assert content_near == pytest.approx(content_far, abs=1e-5)
    assert content_near == pytest.approx(float((q * k).view(2, 8)[:, 4:].sum()), abs=1e-5)
    assert abs(rotated_near - rotated_far) > 1e-3
    assert score(1.0, 40, 2)[1] != pytest.approx(content_far, abs=1e-3)


def test_batched_generation_equals_one_by_one_greedy():
    model = make(copy_layers=[0])
    prompts = [[1, 2, 3], [4, 5, 6, 7, 8, 9], [10]]
    generated = generate(model, prompts, max_new_tokens=6, eos_id=39)
    for prompt, got in zip(prompts, generated, strict=True):
        seq = list(prompt)
        for _ in range(6):
            seq.append(int(model(torch.tensor([seq])).logits[0, -1].argmax()))
            if seq[-1] == 39:
                break
        assert got == seq[len(prompt) :]


def test_hidden_states_cover_every_layer_of_every_iteration_and_read_out_to_the_logits():
    model = make(n_loops=3)
    out = model(torch.randint(0, 40, (2, 7)), return_hidden=True)
    assert len(out.hidden) == 3 and all(len(layers) == 2 for layers in out.hidden)
    assert torch.allclose(model.readout(out.hidden[-1][-1]), out.logits)
    assert not torch.allclose(out.hidden[0][-1], out.hidden[1][-1])


def test_looping_shares_weights_and_zero_init_blocks_start_as_identity():
    looped, single = make(n_loops=4, zero_init=True), make(n_loops=1, zero_init=True)
    assert looped.num_parameters() == single.num_parameters()
    ids = torch.randint(0, 40, (2, 6))
    out = looped(ids, return_hidden=True)
    assert torch.allclose(out.hidden[-1][-1], out.embedded)
    assert looped(ids, n_loops=1).logits.shape == out.logits.shape


def test_tied_model_has_no_separate_unembedding():
    tied, untied = make(tied=True), make(tied=False)
    assert tied.unembedding is tied.embed.weight
    assert untied.num_parameters() == tied.num_parameters() + 40 * 32


def test_copy_head_values_are_raw_embeddings():
    head = CopyAttention(d_model=8, head_dim=4, gate_init=2.0)
    torch.nn.init.zeros_(head.qk.weight)  # uniform causal attention
    x, values = torch.randn(1, 5, 8), torch.randn(1, 5, 8)
    out = head(x, values, None, None, None, (0, 0, "copy"))
    expected = 2.0 * values.cumsum(1) / torch.arange(1, 6)[None, :, None]
    assert torch.allclose(out, expected, atol=1e-6)


def test_param_groups_split_by_role():
    groups = make(tied=False, copy_layers=[0]).param_groups()
    names = {k: len(v) for k, v in groups.items()}
    assert names["embed"] == 1 and names["unembed"] == 1 and names["norm"] > 0 and names["rest"] > 0


@pytest.mark.parametrize("positions", ["learned", "rotary"])
def test_same_symbol_term_at_zero_leaves_the_model_unchanged(positions):
    off = make(positions=positions, copy_layers=[1])
    on = make(positions=positions, copy_layers=[1], identity_bias=0.0)
    assert {n for n, _ in on.named_parameters()} - {n for n, _ in off.named_parameters()} == {
        "blocks.0.attn.same_symbol",
        "blocks.1.attn.same_symbol",
    }
    on.load_state_dict(off.state_dict(), strict=False)
    ids = torch.randint(0, 40, (3, 12))
    assert torch.allclose(on(ids).logits, off(ids).logits, atol=1e-6)
    on.blocks[0].attn.same_symbol.data.fill_(1.0)
    assert not torch.allclose(on(ids).logits, off(ids).logits, atol=1e-4)


def _what_position_3_reads(model) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention output of block 0 at position 3 of [5, 7, 9, 7, 11] mapped back to the values it
    read, and the block's normalized input, with scores from the same-symbol term alone."""
    attn = model.blocks[0].attn
    with torch.no_grad():  # scores from the term alone; values: the identity on the residual
        attn.qkv.weight.zero_()
        attn.qkv.weight[64:].copy_(torch.eye(32))
    ids = torch.tensor([[5, 7, 9, 7, 11]])
    seen: dict[str, torch.Tensor] = {}
    hook = attn.register_forward_hook(lambda m, i, o: seen.update(out=o))
    model(ids)
    hook.remove()
    x = model.blocks[0].ln1(model.embed(ids))
    out_w, out_b = attn.out.weight, attn.out.bias
    return torch.linalg.solve(out_w, (seen["out"][0, 3] - out_b)), x[0]


def test_same_symbol_term_attends_to_earlier_copies_of_the_query_symbol():
    values, x = _what_position_3_reads(make(identity_bias=100.0, n_layers=1, positions="none"))
    assert torch.allclose(values, (x[1] + x[3]) / 2, atol=0.05)  # the two 7s, nearly all the weight


def test_same_symbol_term_restricted_to_symbols_ignores_other_tokens():
    model = make(identity_bias=100.0, n_layers=1, positions="none", identity_bias_scope="symbols")
    model.restrict_same_symbol([5, 9, 11])  # 7 is not a symbol: its copies score 0 like any pair
    values, x = _what_position_3_reads(model)
    assert torch.allclose(values, x[:4].mean(0), atol=1e-4)  # uniform over the causal window
    model.restrict_same_symbol([7])
    values, x = _what_position_3_reads(model)
    assert torch.allclose(values, (x[1] + x[3]) / 2, atol=0.05)


def test_same_symbol_weights_are_not_decayed():
    from symgen.config.train import TrainConfig
    from symgen.training.optim import build_optimizer

    model = make(identity_bias=3.0)
    assert float(model.blocks[1].attn.same_symbol.detach()[0]) == 3.0
    opt = build_optimizer(model, TrainConfig(weight_decay=0.5))
    beta = model.blocks[1].attn.same_symbol
    (group,) = [g for g in opt.param_groups if any(p is beta for p in g["params"])]
    assert group["weight_decay"] == 0.0


@pytest.mark.parametrize("positions", ["learned", "rotary"])
def test_selected_readout_equals_the_full_logits_there(positions):
    model = make(positions=positions, copy_layers=[1], identity_bias=1.0)
    ids = torch.randint(0, 40, (3, 12))
    select = torch.rand(3, 12) > 0.5
    full = model(ids).logits
    assert torch.allclose(model(ids, select=select).logits, full[select], atol=1e-6)
    assert torch.allclose(model(ids).logits, full)  # a second call reads the cached rotary tables
    assert len(model._rotary_cache) == (1 if positions == "rotary" else 0)


def test_a_detached_same_symbol_term_sends_no_gradient_to_the_rows_through_the_cosines():
    grads = {}
    for detach in (False, True):
        model = make(identity_bias=3.0, identity_bias_detach=detach, positions="none").train()
        ids = torch.randint(0, 40, (2, 10))
        model(ids).logits.sum().backward()
        grads[detach] = model.embed.weight.grad.clone()
    assert not torch.allclose(grads[False], grads[True])  # the rows also get gradient from the term


@pytest.mark.parametrize("extra", [{}, {"identity_bias": 3.0, "n_loops": 2}])
def test_a_bidirectional_model_reads_later_tokens_and_ignores_right_padding(extra):
    model = make(positions="rotary", causal=False, pad_id=0, **extra)
    ids = torch.randint(1, 40, (2, 10))
    out = model(ids).logits
    changed = ids.clone()
    changed[:, -1] = (changed[:, -1] % 39) + 1  # another real token at the end
    assert not torch.allclose(model(changed).logits[:, 0], out[:, 0], atol=1e-4)  # the first position sees it
    padded = torch.cat([ids, torch.zeros(2, 5, dtype=torch.long)], 1)
    assert torch.allclose(model(padded).logits[:, :10], out, atol=1e-5)
    causal = make(positions="rotary", **extra)
    assert torch.allclose(causal(changed).logits[:, 0], causal(ids).logits[:, 0], atol=1e-6)
    with pytest.raises(UserError, match="does not generate"):
        generate(model, [[1, 2, 3]], 2, eos_id=4)
