import numpy as np
import torch

from symgen.analysis.looped import (
    Queries,
    accuracy_by_iteration,
    answer_log_probs,
    halting_report,
    lens_decodability,
    margins,
)
from symgen.models.recurrence import fixed, kl_and_entropy, kl_entropy, kl_only
from symgen.models.transformer import ModelConfig, Transformer

CPU = torch.device("cpu")


def looped_model() -> Transformer:
    torch.manual_seed(0)
    cfg = ModelConfig(
        vocab_size=30, d_model=32, n_heads=4, n_layers=2, max_seq_len=6, n_loops=3, positions="none"
    )
    return Transformer(cfg).eval()


def queries(n: int = 12) -> Queries:
    rng = np.random.default_rng(0)
    lengths = rng.integers(2, 6, n)
    tokens = np.zeros((n, 5), dtype=np.int64)
    for i, length in enumerate(lengths):
        tokens[i, :length] = rng.integers(1, 30, length)
    return Queries(tokens, lengths, rng.integers(1, 30, n))


def test_per_iteration_distribution_at_R_equals_a_direct_forward():
    model, q = looped_model(), queries()
    lp = answer_log_probs(model, q, max_iters=5, device=CPU, batch=5)
    assert lp.shape == (5, 12, 30)
    for i in range(12):
        ids = torch.from_numpy(q.tokens[i : i + 1, : q.lengths[i]])
        direct = torch.log_softmax(model(ids, n_loops=4).logits[0, -1], -1)
        assert torch.allclose(lp[3, i], direct, atol=1e-5)


def _sharpening(R: int = 6, converge_at: int = 3, sharp: bool = True) -> torch.Tensor:
    """One example whose distribution changes until `converge_at`, then stays put."""
    logits = torch.zeros(R, 1, 10)
    for t in range(R):
        logits[t, 0, t % 10 if t < converge_at else (converge_at - 1) % 10] = 10.0 if sharp else 0.5
    return torch.log_softmax(logits, -1)


def test_halting_rules_stop_where_they_should():
    sharp = _sharpening(converge_at=3)
    assert int(kl_entropy().halt_at(sharp)[0]) == 4  # first t with p_t == p_{t-1}
    flat = _sharpening(converge_at=3, sharp=False)
    assert int(kl_only().halt_at(flat)[0]) == 4
    assert int(kl_entropy(entropy_max=1.0).halt_at(flat)[0]) == 6  # never confident: the last iteration
    assert int(fixed(2).halt_at(flat)[0]) == 2


def test_halting_report_counts_iterations_and_flops():
    lp = torch.cat([_sharpening(converge_at=2), _sharpening(converge_at=5)], dim=1)
    answers = np.array([1, 4])
    report = halting_report(lp, answers, [kl_entropy(), fixed(6)])
    adaptive, full = report
    assert adaptive["mean_iterations"] == (3 + 6) / 2 and adaptive["accuracy"] == 1.0
    assert abs(adaptive["flops_saved"] - (1 - 4.5 / 6)) < 1e-9 and full["flops_saved"] == 0.0
    assert sum(adaptive["iteration_histogram"]) == 2


def test_margin_peaks_and_t_star():
    logits = torch.zeros(4, 2, 5)
    logits[:, :, 2] = torch.tensor([0.0, 2.0, 3.0, 1.0])[:, None]  # target 2 rises then falls
    result = margins(torch.log_softmax(logits, -1), np.array([2, 2]))
    assert result["peak_iteration"] == 3 and abs(result["peak_margin"] - 3.0) < 1e-5
    assert result["t_star"] == 2.0
    assert accuracy_by_iteration(torch.log_softmax(logits, -1), np.array([2, 2])) == [0.0, 1.0, 1.0, 1.0]


def test_forward_halting_freezes_examples_and_matches_fixed_iterations():
    model, q = looped_model(), queries(8)
    ids = torch.from_numpy(q.tokens[:, :5].copy())
    out = model(ids, n_loops=6, halting=fixed(2))
    assert out.iterations.tolist() == [2] * 8
    assert torch.allclose(out.logits, model(ids, n_loops=2).logits, atol=1e-5)
    adaptive = model(ids, n_loops=6, halting=kl_entropy(kl_eps=1e9, entropy_max=1e9))
    assert adaptive.iterations.tolist() == [2] * 8  # everything passes, so stop at the first allowed


def test_forward_halting_reads_the_last_real_token_of_right_padded_rows():
    model, q = looped_model(), queries(8)
    ids = torch.from_numpy(q.tokens[:, :5].copy())
    padded = torch.cat([ids, torch.zeros(8, 3, dtype=torch.long)], 1)
    mask = torch.cat([torch.ones(8, 5, dtype=torch.bool), torch.zeros(8, 3, dtype=torch.bool)], 1)
    # a KL threshold between the examples' second-iteration KLs at the answer: some stop, some go on
    with torch.no_grad():
        history = torch.stack([model(ids, n_loops=r).logits[:, -1].log_softmax(-1) for r in (1, 2)])
    kl, _ = kl_and_entropy(history)
    rule = kl_entropy(kl_eps=float(kl[1].median()) + 1e-9, entropy_max=1e9)
    expected = model(ids, n_loops=6, halting=rule).iterations
    assert 2 in expected.tolist() and max(expected.tolist()) > 2
    assert model(padded, mask, n_loops=6, halting=rule).iterations.tolist() == expected.tolist()
    at_pad = model(padded, mask, n_loops=6, halting=rule, answer_positions=torch.full((8,), 7)).iterations
    assert at_pad.tolist() != expected.tolist()


def test_lens_at_the_last_layer_matches_the_direct_forward():
    model, q = looped_model(), queries(10)
    q.lengths[:] = 5
    direct = model(torch.from_numpy(q.tokens), n_loops=3).logits[:, -1].argmax(-1).numpy()
    result = lens_decodability(model, q, {"last": (4, direct)}, n_loops=3, device=CPU)
    assert len(result["last"]) == 3 and len(result["last"][0]) == 2
    assert result["last"][-1][-1] == 1.0
