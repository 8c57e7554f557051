"""Looking inside looped models (SPEC B4): accuracy against inference iterations, logit margins
(overthinking), adaptive halting, and the logit lens.

Everything reads the model's own forward pass: `forward(return_hidden=True)` gives the residual
stream after every layer of every iteration and `readout` (final LayerNorm + unembedding) turns
any of them into logits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from symgen.models.recurrence import HaltingRule
from symgen.models.transformer import Transformer


@dataclass
class Queries:
    """k-hop queries: right-padded token ids (N, T), input lengths (N,), answer ids (N,)."""

    tokens: np.ndarray
    lengths: np.ndarray
    answers: np.ndarray


@torch.no_grad()
def hidden_states(model: Transformer, q: Queries, max_iters: int, device: torch.device) -> list[list[Tensor]]:
    """hidden[r][l]: (N, T, D) residual stream after layer l of iteration r (one forward pass)."""
    width = int(q.lengths.max())
    ids = torch.from_numpy(q.tokens[:, :width].copy()).to(device)
    return model(ids, n_loops=max_iters, return_hidden=True).hidden


@torch.no_grad()
def answer_log_probs(
    model: Transformer, q: Queries, max_iters: int, device: torch.device, batch: int = 512
) -> Tensor:
    """(R, N, V) log-probabilities at the last input token after each iteration r = 1..R."""
    parts = []
    for start in range(0, len(q.answers), batch):
        sl = slice(start, start + batch)
        part = Queries(q.tokens[sl], q.lengths[sl], q.answers[sl])
        hidden = hidden_states(model, part, max_iters, device)
        rows = torch.arange(len(part.answers), device=device)
        last = torch.from_numpy(part.lengths - 1).to(device)
        logits = torch.stack([model.readout(layers[-1][rows, last]) for layers in hidden])
        parts.append(F.log_softmax(logits.float(), -1).cpu())
    return torch.cat(parts, dim=1)


def accuracy_by_iteration(log_probs: Tensor, answers: np.ndarray) -> list[float]:
    """Top-1 accuracy after each iteration."""
    right = log_probs.argmax(-1) == torch.from_numpy(answers)[None]
    return right.float().mean(1).tolist()


def margins(log_probs: Tensor, answers: np.ndarray) -> dict:
    """Mean logit margin (target minus best other; log-prob differences equal logit differences)
    per iteration, its peak, and t* = mean first iteration whose argmax is right, over examples
    that ever get it right."""
    target = torch.from_numpy(answers)
    idx = target[None, :, None].expand(log_probs.shape[0], -1, 1)
    target_lp = log_probs.gather(-1, idx).squeeze(-1)
    others = log_probs.scatter(-1, idx, float("-inf")).max(-1).values
    margin = (target_lp - others).mean(1)
    right = (log_probs.argmax(-1) == target[None]).float()
    ever = right.max(0).values.bool()
    first = right.argmax(0).float() + 1
    t_star = float(first[ever].mean()) if bool(ever.any()) else None
    return {
        "margin": margin.tolist(),
        "peak_iteration": int(margin.argmax()) + 1,
        "peak_margin": float(margin.max()),
        "t_star": t_star,
    }


def halting_report(log_probs: Tensor, answers: np.ndarray, rules: list[HaltingRule]) -> list[dict]:
    """Accuracy and iterations used per rule; FLOPs saved against always running all R iterations
    (the cost of one iteration is the same at every depth, so FLOPs scale with iterations)."""
    R = log_probs.shape[0]
    target = torch.from_numpy(answers)
    out = []
    for rule in rules:
        stop = rule.halt_at(log_probs)
        chosen = log_probs[stop - 1, torch.arange(len(answers))].argmax(-1)
        counts = torch.bincount(stop, minlength=R + 1)[1:]
        out.append(
            {
                "rule": rule.label,
                "accuracy": float((chosen == target).float().mean()),
                "mean_iterations": float(stop.float().mean()),
                "iteration_histogram": counts.tolist(),
                "flops_saved": 1.0 - float(stop.float().mean()) / R,
            }
        )
    return out


@torch.no_grad()
def lens_decodability(
    model: Transformer,
    q: Queries,
    probes: dict[str, tuple[int, np.ndarray]],
    n_loops: int,
    device: torch.device,
) -> dict[str, list[list[float]]]:
    """Logit lens: for each probe (position, expected token ids), the top-1 rate of the expected
    token after every layer of every iteration: result[probe][iteration][layer]."""
    hidden = hidden_states(model, q, n_loops, device)
    out: dict[str, list[list[float]]] = {}
    for name, (position, expected) in probes.items():
        want = torch.from_numpy(expected).to(device)
        out[name] = [
            [float((model.readout(h[:, position]).argmax(-1) == want).float().mean()) for h in layers]
            for layers in hidden
        ]
    return out
