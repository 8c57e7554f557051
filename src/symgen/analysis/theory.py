"""The contraction of never-seen class rows under (S)GD with weight decay (SPEC A5, claim A7.7).

Model: a softmax classifier z_k = <u_k, h(x)> over K classes. The features h(x) are random inputs
through a random linear map, LayerNorm'd (no affine) and rescaled to norm exactly r. A set U of
classes never occurs as a label. Every quantity is float64 so the bound check is exact to rounding.

Update rule for (S)GD, written out: u <- u - eta * (grad + lambda * u). For plain (S)GD decoupled
weight decay and an L2 penalty lambda/2 ||u||^2 coincide in this form. For i, j in U the label
terms of the gradient vanish and, with Delta = u_i - u_j and p the largest probability the model
gives any unseen class on the batch at that step (measured),

    Delta+ = (1 - eta*lambda) Delta - eta * mean_b (p_ib - p_jb) h_b,
    |p_ib - p_jb| <= max(p_ib, p_jb) |<Delta, h_b>| <= p r ||Delta||,

hence | ||Delta+|| - |1 - eta*lambda| ||Delta|| | <= eta r^2 p ||Delta||. The upper side is the
bound of the lemma; for eta*lambda <= 1 it equals the predicted rate 1 - eta(lambda - r^2 p).
For 1 < eta*lambda < 2 the factor 1 - eta*lambda is negative: Delta still shrinks but flips sign
every step (cos(Delta+, Delta) ~ -1); for eta*lambda > 2 it grows. AdamW (decoupled decay, moments
normalize the tiny unseen gradients) has no such bound: only the empirical collapse is measured.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from symgen.errors import UserError

TOL = 1e-9  # allowed excess of a measured ratio over its bound (rounding only)
# reported beside the GD rate, not judged: half the distance between the lemma's rate and plain
# decay's 1 - eta*lambda, a scale for how close to the bound the measured rate sits
RATE_TOL_SHARE = 0.5
FLOOR = 1e-9  # pairs with ||Delta|| below FLOOR * max ||u|| are at rounding level and not measured


@dataclass(frozen=True)
class Setup:
    classes: int = 64
    unseen: int = 20
    dim: int = 32
    in_dim: int = 32
    examples: int = 512
    radius: float = 1.0
    init_std: float = 1.0
    seed: int = 0


@dataclass(frozen=True)
class Case:
    name: str
    optimizer: str  # "gd" (full batch), "sgd" (mini-batch) or "adamw"
    lr: float
    weight_decay: float
    steps: int
    batch: int = 0  # 0: full batch
    train_features: bool = False  # also train the random map in front of the LayerNorm
    note: str = ""


def default_cases(steps: int, batch: int) -> list[Case]:
    return [
        Case("gd", "gd", 0.5, 0.1, steps, note="eta*lambda = 0.05 < 1, r^2 p < lambda: contraction"),
        Case("sgd", "sgd", 0.5, 0.1, steps, batch, True, "mini-batch SGD, feature map trained too"),
        Case("sign_flip", "gd", 1.0, 1.5, 40, note="eta*lambda = 1.5: contracts, sign flips"),
        Case("diverge", "gd", 1.0, 2.5, 40, note="eta*lambda = 2.5 > 2: differences grow"),
        Case("adamw", "adamw", 0.02, 0.1, steps, note="decoupled decay; no bound, collapse only"),
        Case("adamw_no_decay", "adamw", 0.02, 0.0, steps, note="AdamW without decay, for reference"),
    ]


SCALES: dict[str, tuple[Setup, list[Case]]] = {
    "quick": (Setup(), default_cases(300, 64)),
    "paper": (
        Setup(classes=1000, unseen=100, dim=256, in_dim=256, examples=4096),
        default_cases(1000, 512),
    ),
}


def features(x: torch.Tensor, w: torch.Tensor, radius: float) -> torch.Tensor:
    """LayerNorm (no affine) of x @ w, rescaled so every row has norm exactly `radius`."""
    c = F.layer_norm(x @ w, (w.shape[1],), eps=1e-12)
    return radius * c / c.norm(dim=-1, keepdim=True)


def make_problem(s: Setup, device: str = "cpu") -> dict[str, torch.Tensor]:
    """Inputs, labels from a random teacher over the seen classes, the feature map and U at init."""
    if s.unseen >= s.classes:
        raise UserError(f"unseen={s.unseen} must be smaller than classes={s.classes}")
    g = torch.Generator().manual_seed(s.seed)
    kw = {"generator": g, "dtype": torch.float64}
    x = torch.randn(s.examples, s.in_dim, **kw)
    w = torch.randn(s.in_dim, s.dim, **kw) / math.sqrt(s.in_dim)
    unseen = torch.arange(s.classes - s.unseen, s.classes)
    teacher = torch.randn(s.classes - s.unseen, s.dim, **kw)
    y = (features(x, w, s.radius) @ teacher.T).argmax(-1)
    u = s.init_std * torch.randn(s.classes, s.dim, **kw) / math.sqrt(s.dim)
    problem = {"x": x, "y": y, "w": w, "u": u, "unseen": unseen}
    return {k: v.to(device) for k, v in problem.items()}


def _pairs(m: int) -> tuple[torch.Tensor, torch.Tensor]:
    i, j = torch.triu_indices(m, m, offset=1)
    return i, j


def mean_pairwise_cosine(rows: torch.Tensor) -> float:
    n = F.normalize(rows, dim=-1)
    m = n.shape[0]
    return float(((n.sum(0) ** 2).sum() - m) / (m * (m - 1)))


def run_case(s: Setup, case: Case, problem: dict[str, torch.Tensor]) -> dict[str, np.ndarray]:
    """Train one case; per step, the measured pairwise ratios against the bound."""
    x, y, unseen = problem["x"], problem["y"], problem["unseen"]
    u = problem["u"].clone().requires_grad_(True)
    w = problem["w"].clone().requires_grad_(case.train_features)
    params = [u, w] if case.train_features else [u]
    opt = None
    if case.optimizer == "adamw":
        opt = torch.optim.AdamW(params, lr=case.lr, weight_decay=case.weight_decay)
    elif case.optimizer not in ("gd", "sgd"):
        raise UserError(f"unknown optimizer {case.optimizer!r}: use gd, sgd or adamw")
    g = torch.Generator().manual_seed(s.seed + 1)
    pi, pj = (t.to(x.device) for t in _pairs(len(unseen)))
    eta, lam, r2 = case.lr, case.weight_decay, s.radius**2
    rec: dict[str, list] = {k: [] for k in ("p", "bound", "lower", "ratio", "signed", "dnorm", "cos")}
    for _ in range(case.steps):
        idx = torch.randperm(len(x), generator=g)[: case.batch].to(x.device) if case.batch else slice(None)
        logits = features(x[idx], w, s.radius) @ u.T
        loss = F.cross_entropy(logits, y[idx])
        p = float(torch.softmax(logits.detach(), -1)[:, unseen].max())
        before = u.detach()[unseen].clone()
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            if opt is None:
                u -= eta * (grads[0] + lam * u)  # (S)GD with weight decay, written out
                if case.train_features:
                    w -= eta * grads[1]
            else:
                for t, gr in zip(params, grads, strict=True):
                    t.grad = gr
                opt.step()
        after = u.detach()[unseen]
        d, dp = before[pi] - before[pj], after[pi] - after[pj]
        dn, dpn = d.norm(dim=-1), dp.norm(dim=-1)
        ok = dn > FLOOR * before.norm(dim=-1).max()
        nan = torch.full_like(dn, float("nan"))
        rec["p"].append(p)
        rec["bound"].append(abs(1 - eta * lam) + eta * r2 * p)
        rec["lower"].append(abs(1 - eta * lam) - eta * r2 * p)
        rec["ratio"].append(torch.where(ok, dpn / dn, nan).cpu().numpy())
        rec["signed"].append(torch.where(ok, (dp * d).sum(-1) / dn**2, nan).cpu().numpy())
        rec["dnorm"].append(dn.cpu().numpy())
        rec["cos"].append(mean_pairwise_cosine(before))
    rec["dnorm"].append(dpn.cpu().numpy())
    rec["cos"].append(mean_pairwise_cosine(after))
    return {k: np.asarray(v) for k, v in rec.items()}


def summarize(s: Setup, case: Case, rec: dict[str, np.ndarray]) -> dict:
    eta, lam, r2 = case.lr, case.weight_decay, s.radius**2
    out: dict = {**asdict(case), "eta_lambda": eta * lam}
    out["final_mean_cosine"] = float(rec["cos"][-1])
    out["initial_mean_cosine"] = float(rec["cos"][0])
    out["p_max"] = float(rec["p"].max())
    out["p_median"] = float(np.median(rec["p"]))
    shrink = rec["dnorm"][-1] / rec["dnorm"][0]
    out["delta_final_over_initial"] = float(np.median(shrink))
    if case.optimizer == "adamw":
        return out
    ratio = rec["ratio"]
    finite = np.isfinite(ratio)
    out["measured_fraction"] = float(finite.mean())
    out["max_excess_over_bound"] = float(np.nanmax(ratio - rec["bound"][:, None]))
    out["max_shortfall_below_lower"] = float(np.nanmax(rec["lower"][:, None] - ratio))
    out["r2p_below_lambda_all_steps"] = bool((r2 * rec["p"] < lam).all())
    # share of the softmax allowance eta r^2 p that the measured ratio uses beyond |1 - eta*lambda|:
    # in [-1, 1] by the two-sided bound; < 0 (the softmax push pulls unseen rows together) for
    # eta*lambda < 1, > 0 (it adds to the overshoot) for eta*lambda > 1
    used = (ratio - abs(1 - eta * lam)) / (eta * r2 * rec["p"][:, None])
    out["softmax_share_median"] = float(np.nanmedian(used))
    out["softmax_share_max"] = float(np.nanmax(used))
    measured = np.nanmedian(ratio, axis=1)
    out["median_rate_measured"] = float(np.nanmedian(measured))
    out["median_rate_predicted"] = float(np.median(1 - eta * (lam - r2 * rec["p"])))
    out["rate_decay_only"] = 1 - eta * lam  # the softmax term's share is at most eta r^2 p either way
    out["median_bound"] = float(np.median(rec["bound"]))
    out["median_signed_rate"] = float(np.nanmedian(rec["signed"]))  # <Delta+, Delta> / ||Delta||^2
    signed = rec["signed"][np.isfinite(rec["signed"])]
    out["sign_flip_fraction"] = float((signed < 0).mean()) if signed.size else 0.0
    return out


def _claim(cases: dict[str, dict], figure: str) -> dict:
    """A7.7 part by part: each part's text (with its bar), whether it holds, and what was measured."""
    bounded = [c for c in cases.values() if "max_excess_over_bound" in c]
    worst = max(c["max_excess_over_bound"] for c in bounded)
    gd, flip, div = cases["gd"], cases["sign_flip"], cases["diverge"]
    measured_rate, predicted, decay = (
        gd["median_rate_measured"],
        gd["median_rate_predicted"],
        gd["rate_decay_only"],
    )
    # the tolerance must be able to tell the predicted rate from plain decay's 1 - eta*lambda
    rate_tol = RATE_TOL_SHARE * abs(predicted - decay)
    parts = [
        {
            "text": "(S)GD: the unseen rows' contraction stays within the bound at every step "
            f"(excess ≤ {TOL:g})",
            "ok": worst <= TOL,
            "measured": f"max(ratio − bound) = {worst:.1e} over {len(bounded)} cases",
        },
        {
            # the lemma is an upper bound: a measured rate at or below it agrees; tightness is not claimed
            "text": "GD: the measured contraction rate is at most the lemma's rate 1 − η(λ − r²p) "
            "(an upper bound, with r²p < λ at every step)",
            "ok": gd["r2p_below_lambda_all_steps"] and measured_rate <= predicted + TOL,
            "measured": f"η·λ = {gd['eta_lambda']:g}: measured {measured_rate:.4f}, bound "
            f"{predicted:.4f}, plain decay {decay:.4f} ({predicted - measured_rate:.4f} below the bound; "
            f"{rate_tol:.4f} is half the bound's distance to plain decay)",
        },
        {
            "text": "η·λ > 1: Δ flips sign at > 90 % of steps and still shrinks",
            "ok": flip["sign_flip_fraction"] > 0.9 and flip["delta_final_over_initial"] < 1,
            "measured": f"η·λ = {flip['eta_lambda']:g}: {100 * flip['sign_flip_fraction']:.0f} % sign flips, "
            f"‖Δ‖ ×{flip['delta_final_over_initial']:.2g}",
        },
        {
            "text": "η·λ > 2: ‖Δ‖ grows",
            "ok": div["delta_final_over_initial"] > 1,
            "measured": f"η·λ = {div['eta_lambda']:g}: ‖Δ‖ ×{div['delta_final_over_initial']:.2g}",
        },
    ]
    return {
        "id": "A7.7",
        "parts": parts,
        "note": f"AdamW (no bound; collapse measured only): final unseen-row mean cosine "
        f"{cases['adamw']['final_mean_cosine']:.3f}",
        "evidence": [figure],
        "values": {
            "max_excess_over_bound": worst,
            "gd_rate_measured": measured_rate,
            "gd_rate_predicted": predicted,
            "gd_rate_decay_only": decay,
            "rate_tolerance": rate_tol,
            "sign_flip_fraction": flip["sign_flip_fraction"],
            "diverge_delta_ratio": div["delta_final_over_initial"],
            "adamw_final_mean_cosine": cases["adamw"]["final_mean_cosine"],
        },
    }


def plot(records: dict[str, dict[str, np.ndarray]], cases: dict[str, Case], path: Path) -> Path:
    """The three views one above the other, so each is as wide as the report shows a figure."""
    from symgen.analysis.plots import WIDTH, plt, save

    fig, axes = plt.subplots(3, 1, figsize=(WIDTH, 9.6), layout="constrained")
    ax = axes[0]
    for name, color, lw in (("gd", "C0", 2.8), ("sgd", "C1", 1.2), ("sign_flip", "C2", 1.6)):
        rec = records[name]
        rel = np.median(rec["dnorm"] / rec["dnorm"][0], axis=1)
        env = np.concatenate([[1.0], np.cumprod(rec["bound"])])
        ax.semilogy(rel, color=color, lw=lw, label=name)
        ax.semilogy(env, color=color, ls="--", lw=1)
    ax.set_xlabel("step")
    ax.set_ylabel("relative ||u_i - u_j||")
    ax.set_title(
        "Unseen-row differences against the bound\n"
        "(solid: median ||Δ_t|| / ||Δ_0||; dashed: bound ∏(|1-ηλ| + ηr²p))",
        fontsize=10,
    )
    ax.legend(fontsize=8, loc="upper right")
    ax = axes[1]
    for name, color in (("sign_flip", "C2"), ("diverge", "C3")):
        signed = np.nanmedian(records[name]["signed"], axis=1)
        el = cases[name].lr * cases[name].weight_decay
        ax.plot(signed, color=color, lw=1.4, label=f"{name} (ηλ={el:g})")
        ax.axhline(1 - el, color=color, ls=":", lw=1)
    signed = np.nanmedian(records["gd"]["signed"], axis=1)
    ax.plot(signed, color="C0", lw=1.4, label="gd (ηλ=0.05)")
    ax.axhline(0, color="gray", lw=0.8)
    ax.set_xlabel("step")
    ax.set_ylabel("<Δ⁺, Δ> / ||Δ||²")
    ax.set_title("Signed per-step rate (dotted: 1-ηλ)", fontsize=10)
    ax.legend(fontsize=8, loc="center right")
    ax = axes[2]
    for name in ("gd", "sgd", "adamw", "adamw_no_decay"):
        ax.plot(records[name]["cos"], lw=1.4, label=name)
    ax.set_xlabel("step")
    ax.set_ylabel("mean pairwise cosine,\nunseen rows")
    ax.set_title("Collapse of unseen rows", fontsize=10)
    ax.set_ylim(-0.1, 1.05)
    ax.legend(fontsize=8, loc="lower right")
    return save(fig, path)


def run_theory(out_dir: Path, scale: str = "quick", seed: int = 0, device: str | None = None) -> dict:
    """Run every case, write theory.json and theory.png into out_dir, return the report.

    `device` defaults to CUDA when present (float64 throughout; the paper scale wants a GPU)."""
    if scale not in SCALES:
        raise UserError(f"unknown scale {scale!r}: use one of {', '.join(SCALES)}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    setup, case_list = SCALES[scale]
    setup = replace(setup, seed=seed)
    t0 = time.perf_counter()
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    problem = make_problem(setup, device)
    records = {c.name: run_case(setup, c, problem) for c in case_list}
    summaries = {c.name: summarize(setup, c, records[c.name]) for c in case_list}
    figure = plot(records, {c.name: c for c in case_list}, out_dir / "theory.png")
    report = {
        "scale": scale,
        "device": device,
        "setup": asdict(setup),
        "update_rule": "(S)GD: u <- u - eta*(grad + lambda*u); AdamW: torch.optim.AdamW (decoupled)",
        "bound": "||Delta+|| <= (|1 - eta*lambda| + eta*r^2*p) ||Delta||, p measured per step",
        "tolerance": TOL,
        "cases": summaries,
        "claim": _claim(summaries, figure.name),
        "figure": figure.name,
        "seconds": round(time.perf_counter() - t0, 2),
    }
    (out_dir / "theory.json").write_text(json.dumps(report, indent=2))
    return report
