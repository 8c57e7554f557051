"""Reading implicit-Horn runs (SPEC C.1): accuracy per proof depth and inference iteration count r,
the depth a read-out reaches, halting iterations, and r chosen on a validation set.

A depth is *reached* at a read-out when accuracy is at least a bar there and at every shallower
depth (chance is 0.5: labels are balanced at every depth). A looped model's inference iteration
count r is chosen on validation problems (`ImplicitHornTask.validation_problems`: fresh problems of
the test generator, never a test problem), evaluated here from the run's final weights, so runs
trained before this analysis existed are read alike and the test set never chooses r.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import yaml

from symgen.errors import UserError
from symgen.models.transformer import Transformer
from symgen.tasks.horn_implicit import ImplicitHornTask, share
from symgen.training.build import load_run
from symgen.training.run_dir import read_summary

CPU = torch.device("cpu")
ByDepth = dict[int, float]


@dataclass
class ImplicitRun:
    """One finished implicit-Horn run: its final evaluation and what its config says about it."""

    name: str
    dir: Path
    summary: dict[str, Any]
    final: dict[str, float]  # the final evaluation, `eval/` dropped
    trained_depth: int
    test_depth: int
    own_r: int  # the iteration count of the plain read-out (a dynamic model's largest)
    grid: list[int]  # the iteration counts evaluated: task.eval_loops and own_r
    r_label: str  # "dynamic" or own_r
    seed: int = 0
    looped: bool = False
    validation: dict[int, ByDepth] = field(default_factory=dict)  # r -> all_seen accuracy per depth

    def per_depth(self, scenario: str, metric: str) -> ByDepth:
        """`{scenario}/depth{d}/{metric}` of the final evaluation, for every depth it holds."""
        return {
            d: self.final[key]
            for d in range(1, self.test_depth + 1)
            if (key := f"{scenario}/depth{d}/{metric}") in self.final
        }

    def accuracy(self, scenario: str, r: int | None = None) -> ByDepth:
        """Test accuracy per depth at iteration count r (None: the run's own R)."""
        metric = "accuracy" if r is None or r == self.own_r else f"accuracy@r{r}"
        return self.per_depth(scenario, metric)

    def trained_n(self, scenario: str = "all_seen") -> list[int]:
        """The test problems at each trained depth (0 where the run did not log them)."""
        n = self.per_depth(scenario, "n")
        return [int(n.get(d, 0)) for d in range(1, self.trained_depth + 1)]

    def halting_iterations(self, scenario: str = "all_seen") -> ByDepth:
        return self.per_depth(scenario, "halting/iterations")

    def trained(self, scenario: str = "all_seen") -> list[float]:
        """Accuracy at each trained depth at the run's own R (nan where a depth is missing)."""
        acc = self.accuracy(scenario)
        return [acc.get(d, float("nan")) for d in range(1, self.trained_depth + 1)]

    def worst_trained(self, scenario: str = "all_seen") -> float:
        """The lowest accuracy over the trained depths at the own R: the "learned" bar reads this."""
        values = self.trained(scenario)
        return float("nan") if any(v != v for v in values) else min(values)


def load_implicit_run(name: str, run_dir: Path) -> ImplicitRun:
    summary = read_summary(run_dir)
    config = yaml.safe_load((Path(run_dir) / "config.yaml").read_text())
    task, model, train = config["task"], config["model"], config["train"]
    dynamic = train.get("loops") == "poisson"
    return ImplicitRun(
        name=name,
        dir=Path(run_dir),
        summary=summary,
        final={k.removeprefix("eval/"): v for k, v in summary["final"].items()},
        trained_depth=task["max_depth"],
        test_depth=task.get("test_max_depth") or 2 * task["max_depth"],
        own_r=model["n_loops"],
        grid=sorted(set(task.get("eval_loops") or []) | {model["n_loops"]}),
        r_label="dynamic" if dynamic else str(model["n_loops"]),
        seed=config.get("seed", 0),
        looped=dynamic or model["n_loops"] > 1,
    )


def reached(by_depth: ByDepth, bar: float) -> int:
    """The deepest depth whose accuracy, and every shallower depth's, is at least `bar` (0: none)."""
    depth = 0
    for d in sorted(by_depth):
        if not by_depth[d] >= bar or d != depth + 1:
            break
        depth = d
    return depth


def choose_r(by_r: dict[int, ByDepth], bar: float) -> tuple[int, int]:
    """The iteration count whose read-out reaches deepest, ties to the fewest r; and that depth."""
    depth, minus_r = max((reached(acc, bar), -r) for r, acc in by_r.items())
    return -minus_r, depth


def accuracy_by_r(
    task: ImplicitHornTask,
    model: Transformer,
    records: list[dict[str, Any]],
    grid: list[int],
    device: torch.device = CPU,
) -> dict[int, ByDepth]:
    """Accuracy per depth of `records` at every iteration count of `grid`."""
    depths = torch.tensor([r["depth"] for r in records])
    out = {}
    for r in grid:
        right, _ = task.answers(model, records, device, n_loops=r)
        out[r] = {d: share(right[depths == d]) for d in sorted(set(depths.tolist()))}
    return out


def validation_accuracy(
    run_dir: Path, scenario: str = "all_seen", device: torch.device | None = None
) -> dict[int, ByDepth]:
    """The run's final weights read on its task's validation problems at every r of its grid (on a GPU
    when there is one: paper-size models read at every r take minutes on a CPU)."""
    device = device or torch.device("cuda" if torch.cuda.is_available() else "cpu")
    cfg, task, model = load_run(run_dir)
    if not isinstance(task, ImplicitHornTask):
        raise UserError(f"{run_dir} trained task {cfg.task.name!r}, not horn-implicit")
    records = task.validation_problems((scenario,))[scenario]
    return accuracy_by_r(task, model.to(device), records, task.loops_grid(model), device)
