"""Inside a looped implicit-Horn model, iteration by iteration: accuracy, the answer's margin, the
hidden state's change and head-label accuracy per proof depth, read from the model's own forward."""

import json
from types import SimpleNamespace

import pytest
import torch
from conftest import symgen

from symgen.analysis import implicit_iterations as ii
from symgen.config import resolve
from symgen.errors import UserError
from symgen.tasks.base import IGNORE
from symgen.tasks.horn_implicit import ImplicitHornTask, ImplicitHornTaskConfig, answer_positions
from symgen.training.build import build_model
from symgen.training.run import train_run

CPU = torch.device("cpu")
SMALL = dict(
    min_rules=4, max_rules=6, min_facts=2, max_facts=3, max_body=2, max_depth=3, prompt_order="facts_first"
)


@pytest.fixture(scope="module")
def task() -> ImplicitHornTask:
    return ImplicitHornTask(ImplicitHornTaskConfig(**SMALL, n_test=24, head_labels=True), seed=0)


class Scripted:
    """A stand-in whose states are logits (readout is the identity): a problem of depth d is answered
    right at iterations r <= d and wrong after (its answer's two logits swap), every head label is
    right at every iteration. It knows each problem by its prompt."""

    def __init__(self, task: ImplicitHornTask, records: list[dict]) -> None:
        self.pad = task.pad_id
        self.known = {}
        for r in records:
            one = task.batch([r])
            self.known[tuple(one.inputs[0].tolist())] = (one.targets[0], r["depth"])
        self.other = {
            task.answer_ids[True]: task.answer_ids[False],
            task.answer_ids[False]: task.answer_ids[True],
        }
        self.vocab = len(task.vocab)

    def readout(self, h: torch.Tensor) -> torch.Tensor:
        return h

    def __call__(self, inputs: torch.Tensor, n_loops: int, return_hidden: bool) -> SimpleNamespace:
        B, T = inputs.shape
        hidden = [[torch.zeros(B, T, self.vocab)] for _ in range(n_loops)]
        for b, row in enumerate(inputs.tolist()):
            while row[-1] == self.pad:  # right padding: the batch's longest prompt sets the width
                row.pop()
            targets, depth = self.known[tuple(row)]
            at = int(answer_positions(targets[None])[0])
            for t in (targets != IGNORE).nonzero()[:, 0].tolist():
                target = int(targets[t])
                for r in range(1, n_loops + 1):
                    flipped = t == at and r > depth
                    h = hidden[r - 1][0]
                    h[b, t, target], h[b, t, self.other[target]] = (1.0, 2.0) if flipped else (2.0, 1.0)
        return SimpleNamespace(hidden=hidden)


def test_curves_per_depth_on_a_constructed_model(task):
    records = task.test["all_seen"]
    curves = ii.depth_curves(task, Scripted(task, records), records, 4, CPU, batch_size=7)
    assert sorted(curves) == [1, 2, 3, 4, 5, 6] and sum(c["n"] for c in curves.values()) == len(records)
    for d, c in curves.items():
        right = [1.0 if r <= d else 0.0 for r in range(1, 5)]
        assert c["accuracy"] == right
        # the margin is +1 where the model answers right, −1 where the answer flipped
        assert c["margin"] == pytest.approx([1.0 if ok else -1.0 for ok in right])
        assert all((m > 0) == (a == 1.0) for m, a in zip(c["margin"], c["accuracy"], strict=True))
        # the state moves (from 2·right + other to right + 2·other: √2 / √5) only where the answer flips
        moved = [(2 / 5) ** 0.5 if r == d + 1 else 0.0 for r in range(2, 5)]
        assert c["delta_h"] == pytest.approx(moved)
        assert c["head_accuracy"] == [1.0] * 4  # the sub-goals stay right while the answer flips


def test_a_zero_init_looped_model_grows_its_state_by_one_input_per_iteration(task):
    # zero-init blocks are the identity and the input is re-added before every iteration: h_r = r·x,
    # so ‖h_r − h_r−1‖ / ‖h_r−1‖ = 1 / (r − 1) exactly, at every depth
    cfg = resolve("horn-implicit-looped", ["model.d_model=32", "task.n_test=24"])
    model = build_model(cfg, task).eval()
    curves = ii.depth_curves(task, model, task.test["all_seen"], 5, CPU)
    for c in curves.values():
        assert c["delta_h"] == pytest.approx([1 / (r - 1) for r in range(2, 6)], rel=1e-4)
        assert len(c["accuracy"]) == len(c["margin"]) == len(c["head_accuracy"]) == 5


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("implicit") / "looped"
    overrides = ["model.d_model=32", "task.n_seen=30", "task.n_unseen=20", "task.n_test=12",
                 "task.eval_loops=[1,2,6]", "train.steps=30", "train.eval_every=30", "train.warmup_steps=5",
                 "train.threads=1", "train.freeze_embeddings=true"]  # fmt: skip
    train_run(resolve("horn-implicit-looped", overrides), run_dir, progress=False)
    return run_dir


def test_a_tiny_trained_run_is_read_per_depth_and_iteration(tiny_run):
    result = ii.read_run(tiny_run)
    assert result["max_iters"] == 12 and result["own_r"] == 4  # 3 × R beats the grid's largest r (6)
    assert set(result["scenarios"]) == {"all_seen", "all_unseen"}
    for by_depth in result["scenarios"].values():
        assert sorted(by_depth) == [1, 2, 3, 4, 5, 6]
        for c in by_depth.values():
            assert len(c["accuracy"]) == len(c["margin"]) == len(c["head_accuracy"]) == 12
            assert len(c["delta_h"]) == 11 and all(v >= 0 for v in c["delta_h"])
            assert all(0 <= a <= 1 for a in c["accuracy"] + c["head_accuracy"])
    # the read-out at the run's own R is the one its final evaluation scored
    final = json.loads((tiny_run / "summary.json").read_text())["final"]
    for d, c in result["scenarios"]["all_seen"].items():
        assert c["accuracy"][3] == pytest.approx(final[f"eval/all_seen/depth{d}/accuracy"])
        assert c["accuracy"][5] == pytest.approx(final[f"eval/all_seen/depth{d}/accuracy@r6"])
    with pytest.raises(UserError, match="at least one iteration"):
        ii.read_run(tiny_run, max_iters=0)


def test_analyze_margins_and_iterations_read_an_implicit_run(tiny_run):
    result = symgen("analyze", "margins", str(tiny_run), "--max-iters", "6")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "all_seen depth 1: margin" in result.stdout and "‖Δh‖" in result.stdout
    written = json.loads((tiny_run / "analysis" / "margins.json").read_text())
    assert written["max_iters"] == 6 and len(written["scenarios"]["all_seen"]["1"]["margin"]) == 6
    assert (tiny_run / "analysis" / "margins_all_seen.png").stat().st_size > 1000
    result = symgen("analyze", "iterations", str(tiny_run))
    assert result.returncode == 0 and "all_unseen depth 6: accuracy" in result.stdout
    written = json.loads((tiny_run / "analysis" / "iterations.json").read_text())
    assert len(written["scenarios"]["all_seen"]["3"]["accuracy"]) == 12
    assert (tiny_run / "analysis" / "iterations_all_seen.png").stat().st_size > 1000
