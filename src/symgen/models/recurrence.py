"""Halting rules for looped models: small interchangeable functions of the per-iteration answer
distributions.

A rule sees log-probabilities of shape (R, B, V) — iteration t's distribution at the answer
position of each example — and returns, per example, the 1-based iteration at which it stops.
Examples that never satisfy the rule use the last iteration. The same rules drive the analysis
(`symgen analyze halting`) and inference (`Transformer.forward(halting=...)`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from symgen.errors import UserError

KL_EPS = 0.001  # the authors' inference threshold


def kl_and_entropy(log_probs: Tensor) -> tuple[Tensor, Tensor]:
    """KL(p_t || p_{t-1}) (zero at t = 1) and entropy H(p_t), each of shape (R, B), in nats."""
    probs = log_probs.exp()
    entropy = -(probs * log_probs).sum(-1)
    kl = torch.zeros_like(entropy)
    kl[1:] = (probs[1:] * (log_probs[1:] - log_probs[:-1])).sum(-1)
    return kl, entropy


@dataclass
class HaltingRule:
    """Stop at the first iteration t >= min_iter with KL(p_t || p_{t-1}) < kl_eps and, when
    entropy_max is set, H(p_t) < entropy_max. kl_eps = None means a fixed number of iterations."""

    kl_eps: float | None = KL_EPS
    entropy_max: float | None = 3.0
    min_iter: int = 2
    fixed: int | None = None

    def __post_init__(self) -> None:
        if self.kl_eps is not None and not self.kl_eps > 0:
            raise UserError(f"halting KL threshold {self.kl_eps} must be > 0")
        if self.entropy_max is not None and not self.entropy_max > 0:
            raise UserError(f"halting entropy threshold {self.entropy_max} must be > 0")
        if self.fixed is not None and self.fixed < 1:
            raise UserError(f"a fixed number of iterations ({self.fixed}) must be >= 1")

    @property
    def label(self) -> str:
        if self.fixed is not None:
            return f"fixed r={self.fixed}"
        if self.entropy_max is None:
            return f"KL < {self.kl_eps}"
        return f"KL < {self.kl_eps} and H < {self.entropy_max}"

    def stop_mask(self, log_probs: Tensor) -> Tensor:
        """(R, B) bool: iteration t satisfies the rule (1-based t = index + 1)."""
        R = log_probs.shape[0]
        t = torch.arange(1, R + 1, device=log_probs.device)[:, None]
        if self.fixed is not None:
            return (t == self.fixed).expand(R, log_probs.shape[1])
        kl, entropy = kl_and_entropy(log_probs)
        ok = (kl < self.kl_eps) & (t >= self.min_iter)
        if self.entropy_max is not None:
            ok = ok & (entropy < self.entropy_max)
        return ok

    def halt_at(self, log_probs: Tensor) -> Tensor:
        """(B,) 1-based iteration at which each example stops (the last one if it never does)."""
        ok = self.stop_mask(log_probs).clone()
        ok[-1] = True
        return ok.float().argmax(0) + 1


def kl_entropy(kl_eps: float = KL_EPS, entropy_max: float = 3.0) -> HaltingRule:
    return HaltingRule(kl_eps, entropy_max)


def kl_only(kl_eps: float = KL_EPS) -> HaltingRule:
    return HaltingRule(kl_eps, None)


def fixed(r: int) -> HaltingRule:
    return HaltingRule(None, None, fixed=r)
