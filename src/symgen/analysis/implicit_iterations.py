"""Inside a looped implicit-Horn model, iteration by iteration (SPEC C.1): why a model that answers at
its training R may lose the answer past it.

One forward pass with `return_hidden=True` runs r = 1..max iterations; after each, the residual stream
is read out (final LayerNorm + unembedding, the model's own `readout`), per proof depth and scenario:

- `accuracy`: the argmax over the vocabulary at the answer position is the answer (as the task scores);
- `margin`: the logit of the right answer (True or False) minus the other one's, mean over problems
  (positive exactly where the right one of the two wins);
- `delta_h`: ‖h_r − h_{r−1}‖ / ‖h_{r−1}‖ of the residual stream after iteration r at the answer
  position, mean over problems, for r = 2..max: whether the state settles or keeps moving;
- `head_accuracy`: the head labels (whether each rule's head atom is entailed; runs trained with
  `task.head_labels`), right over all labels: whether the sub-goals stay right while the answer flips.

`iterations()` and `margin_curves()` write them under RUN_DIR/analysis/ (iterations.json with a
heatmap of accuracy per depth × r; margins.json with the margin, ‖Δh‖ and head-label curves), as
`symgen analyze iterations|margins` does for a knowledge-graph run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import torch
import yaml

from symgen.analysis.plots import COLOURS, WIDTH, heatmap_figure, legend_below, legend_rows, save
from symgen.errors import UserError
from symgen.models.transformer import Transformer
from symgen.tasks.base import IGNORE
from symgen.tasks.horn_implicit import ImplicitHornTask, answer_positions
from symgen.training.build import load_run

SCENARIOS = ("all_seen", "all_unseen")
CURVES = ("accuracy", "margin", "delta_h", "head_accuracy")


def is_implicit_run(run_dir: Path) -> bool:
    """Whether a run directory holds an implicit-Horn run (False when it is no run directory)."""
    path = Path(run_dir) / "config.yaml"
    if not path.exists():
        return False
    config = yaml.safe_load(path.read_text()) or {}
    return config.get("task", {}).get("name") == "horn-implicit"


@torch.no_grad()
def depth_curves(
    task: ImplicitHornTask,
    model: Transformer,
    records: list[dict[str, Any]],
    max_iters: int,
    device: torch.device,
    batch_size: int = 64,
) -> dict[int, dict[str, Any]]:
    """Per proof depth: `n` problems and the curves of the module docstring against r = 1..max_iters
    (`delta_h` against r = 2..max_iters; `head_accuracy` None when the problems hold no head labels)."""
    sums: dict[int, dict[str, Any]] = {}
    for start in range(0, len(records), batch_size):
        chunk = records[start : start + batch_size]
        for depth, part in _batch_sums(task, model, chunk, max_iters, device).items():
            total = sums.setdefault(depth, {k: 0 for k in part})
            for k, v in part.items():
                total[k] = total[k] + v
    out = {}
    for depth in sorted(sums):
        s = sums[depth]
        n = s["n"]
        heads = (s["head_right"] / s["heads"]).tolist() if s["heads"] > 0 else None
        out[depth] = {
            "n": n,
            "accuracy": (s["right"] / n).tolist(),
            "margin": (s["margin"] / n).tolist(),
            "delta_h": (s["delta_h"] / n).tolist(),
            "head_accuracy": heads,
        }
    return out


def _batch_sums(
    task: ImplicitHornTask,
    model: Transformer,
    records: list[dict[str, Any]],
    max_iters: int,
    device: torch.device,
) -> dict[int, dict[str, Any]]:
    """One batch's sums per depth (right answers, margins, ‖Δh‖ ratios, head labels right and held)."""
    batch = task.batch(records).to(device)
    at = answer_positions(batch.targets)
    rows = torch.arange(len(at), device=device)
    hidden = model(batch.inputs, n_loops=max_iters, return_hidden=True).hidden
    states = torch.stack([layers[-1] for layers in hidden]).float()  # (R, B, T, D) after each iteration
    h = states[:, rows, at]  # (R, B, D) at the answer position
    logits = model.readout(h).float()
    answer = batch.targets[rows, at]
    right = (logits.argmax(-1) == answer).float()  # (R, B)
    true_id, false_id = task.answer_ids[True], task.answer_ids[False]
    true_minus_false = logits[..., true_id] - logits[..., false_id]
    margin = torch.where(answer == true_id, true_minus_false, -true_minus_false)
    delta = (h[1:] - h[:-1]).norm(dim=-1) / h[:-1].norm(dim=-1).clamp_min(1e-12)  # (R - 1, B)
    heads = batch.targets != IGNORE
    heads[rows, at] = False  # every scored position but the answer holds a head label
    head_right = torch.zeros(max_iters, len(at), device=device)
    if heads.any():
        hit = (model.readout(states[:, heads]).argmax(-1) == batch.targets[heads]).float()  # (R, N)
        head_right.index_add_(1, heads.nonzero()[:, 0], hit)
    held = heads.sum(-1)
    depths = torch.tensor([r["depth"] for r in records], device=device)
    out = {}
    for d in sorted(set(depths.tolist())):
        pick = depths == d
        out[d] = {
            "n": int(pick.sum()),
            "right": right[:, pick].sum(1).cpu(),
            "margin": margin[:, pick].sum(1).cpu(),
            "delta_h": delta[:, pick].sum(1).cpu(),
            "head_right": head_right[:, pick].sum(1).cpu(),
            "heads": int(held[pick].sum()),
        }
    return out


def default_max_iters(task: ImplicitHornTask, model: Transformer) -> int:
    """3 × the plain read-out's R (a dynamic model's largest), or the evaluation grid's largest r."""
    return max(3 * model.cfg.n_loops, *task.loops_grid(model))


def read_run(
    run_dir: Path,
    max_iters: int | None = None,
    scenarios: tuple[str, ...] = SCENARIOS,
    device: torch.device | None = None,
) -> dict[str, Any]:
    """The curves of a looped implicit-Horn run's test problems, per scenario and depth, from its
    final weights (on a GPU when there is one)."""
    if max_iters is not None and max_iters < 1:
        raise UserError(f"--max-iters {max_iters}: at least one iteration is needed")
    cfg, task, model = load_run(run_dir)
    if not isinstance(task, ImplicitHornTask):
        raise UserError(f"{run_dir} trained task {cfg.task.name!r}, not horn-implicit")
    dynamic = cfg.train.loops == "poisson"
    if cfg.model.n_loops == 1 and not dynamic:
        raise UserError(f"{run_dir} is not a looped model (model.n_loops = 1): nothing to iterate")
    unknown = [s for s in scenarios if s not in task.test]
    if unknown:
        raise UserError(f"scenario {unknown[0]!r}: the run's test scenarios are {', '.join(task.test)}")
    device = device or torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = model.to(device).eval()
    iters = max_iters or default_max_iters(task, model)
    label = (
        f"dynamic (clip(Poisson({cfg.train.loops_lambda:g}), {cfg.train.loops_min}, {cfg.train.loops_max}))"
        if dynamic
        else str(cfg.model.n_loops)
    )
    return {
        "run": Path(run_dir).name,
        "train_loops": label,
        "own_r": cfg.model.n_loops,  # the plain read-out's R
        "trained_depth": cfg.task.max_depth,
        "max_iters": iters,
        "head_labels": cfg.task.head_labels,
        "scenarios": {s: depth_curves(task, model, task.test[s], iters, device) for s in scenarios},
    }


# ------------------------------------------------------------------------------------------ figures
def accuracy_heatmap(result: dict[str, Any], scenario: str, path: Path) -> Path:
    """Accuracy per depth × r, the training R and the trained depths marked."""
    by_depth = result["scenarios"][scenario]
    depths = sorted(by_depth)
    steps = range(1, result["max_iters"] + 1)
    marks = {  # rows are depths 1, 2, ..., columns r = 1, 2, ...
        f"trained depths ≤ {result['trained_depth']}": ("h", result["trained_depth"] - 0.5),
        f"R of the plain read-out = {result['own_r']}": ("v", result["own_r"] - 1),
    }
    return heatmap_figure(
        path,
        [by_depth[d]["accuracy"] for d in depths],
        [str(d) for d in depths],
        [str(r) for r in steps],
        "inference iterations r",
        "proof depth",
        f"{result['run']} (R = {result['train_loops']}), {scenario}: accuracy at every r",
        marks,
    )


def curves_figure(result: dict[str, Any], scenario: str, path: Path, title: str = "") -> Path:
    """Margin and ‖Δh‖ (and head-label accuracy, when trained) against r, one panel above the other,
    one curve per depth; trained depths solid, deeper ones dashed, the plain read-out's R marked; the
    depths' legend below the panels."""
    by_depth = result["scenarios"][scenario]
    panels = [("margin", "answer margin\n(right − other logit)"), ("delta_h", "‖h_r − h_r−1‖ / ‖h_r−1‖")]
    if any(c["head_accuracy"] is not None for c in by_depth.values()):
        panels.append(("head_accuracy", "head-label accuracy"))
    labels = [f"depth {depth}" for depth in by_depth]
    height = 2.6 * len(panels) + 0.8 + 0.22 * legend_rows(labels)
    fig, axes = plt.subplots(len(panels), 1, figsize=(WIDTH, height), sharex=True, layout="constrained")
    for ax, (key, label) in zip(axes, panels, strict=True):
        for index, (depth, c) in enumerate(by_depth.items()):
            if c[key] is None:
                continue
            first = 2 if key == "delta_h" else 1
            style = "-" if depth <= result["trained_depth"] else "--"
            steps = range(first, first + len(c[key]))
            ax.plot(steps, c[key], style, color=COLOURS[index % len(COLOURS)], lw=1.4, label=f"depth {depth}")
        ax.axvline(result["own_r"], color="gray", ls=":", lw=1)
        if key == "margin":
            ax.axhline(0, color="black", lw=0.6)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("inference iterations r")
    legend_below(fig)
    fig.suptitle(title or f"{result['run']} (R = {result['train_loops']}, dotted), {scenario}", fontsize=10)
    return save(fig, path)


# ------------------------------------------------------------------------------------------ writers
def _write(run_dir: Path, name: str, result: dict[str, Any]) -> Path:
    out = Path(run_dir) / "analysis"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    return path


def iterations(run_dir: Path, max_iters: int | None = None) -> dict[str, Any]:
    """The curves, and a heatmap of accuracy per depth × r per scenario: RUN_DIR/analysis/iterations.*"""
    result = read_run(run_dir, max_iters)
    out = Path(run_dir) / "analysis"
    result["figures"] = [
        str(accuracy_heatmap(result, s, out / f"iterations_{s}.png")) for s in result["scenarios"]
    ]
    _write(run_dir, "iterations", result)
    return result


def margin_curves(run_dir: Path, max_iters: int | None = None) -> dict[str, Any]:
    """The curves, and a figure of margin, ‖Δh‖ and head-label accuracy per scenario:
    RUN_DIR/analysis/margins.*"""
    result = read_run(run_dir, max_iters)
    out = Path(run_dir) / "analysis"
    result["figures"] = [str(curves_figure(result, s, out / f"margins_{s}.png")) for s in result["scenarios"]]
    _write(run_dir, "margins", result)
    return result
