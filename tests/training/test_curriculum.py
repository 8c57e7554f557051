"""The depth curriculum: advances on held-out accuracy, keeps earlier hops, restarts the
optimizer when asked, and resumes exactly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from symgen.config import resolve
from symgen.errors import UserError
from symgen.tasks.kg_task import KGTask, KGTaskConfig
from symgen.training.build import build_model
from symgen.training.curriculum import DepthCurriculum, curriculum_hooks
from symgen.training.run import train_run

DEPTH = dict(setting="depth", entities=12, relations=3, max_hops=4, per_hop=60, test_per_hop=20)


def hops_in_training(task: KGTask) -> set[int]:
    return set(((task.pool.tokens != 0).sum(1) - 1).tolist())


def test_advances_past_threshold_and_keeps_earlier_hops():
    task = KGTask(KGTaskConfig(**DEPTH, curriculum=True), seed=0)
    (hook,) = curriculum_hooks(task)
    assert isinstance(hook, DepthCurriculum) and hops_in_training(task) == {1, 2}
    trainer = SimpleNamespace()
    metrics = {"eval/hop_2/accuracy": 0.94}
    hook.on_eval(trainer, 100, metrics)
    assert hook.stage == 2 and hook.learnable_depth == 0 and metrics["eval/curriculum/stage"] == 2
    hook.on_eval(trainer, 200, {"eval/hop_2/accuracy": 0.95, "eval/hop_3/accuracy": 1.0})
    assert hook.stage == 3 and hook.learnable_depth == 2  # one stage per evaluation
    assert hops_in_training(task) == {1, 2, 3}
    hook.on_eval(trainer, 300, {"eval/hop_3/accuracy": 0.99})
    hook.on_eval(trainer, 400, {"eval/hop_4/accuracy": 0.99})
    assert hook.stage == 4 and hook.learnable_depth == 4  # the last stage passed: depth 4, no stage 5
    assert hops_in_training(task) == {1, 2, 3, 4}
    summary = hook.summary()
    assert summary["learnable_depth"] == 4 and [h["hops"] for h in summary["curriculum_history"]] == [2, 3, 4]

    fresh = KGTask(KGTaskConfig(**DEPTH, curriculum=True), seed=0)
    (restored,) = curriculum_hooks(fresh)
    restored.load_state_dict(json.loads(json.dumps(hook.state_dict())))
    assert restored.stage == 4 and hops_in_training(fresh) == {1, 2, 3, 4}


def test_optimizer_reset_restarts_warmup():
    cfg = resolve(
        "kg-depth-curriculum",
        [f"task.{k}={v}" for k, v in DEPTH.items()]
        + ["task.curriculum_reset_optimizer=true", "task.curriculum_max_hops=0"],
    )
    task = KGTask(cfg.task, cfg.seed)
    model = build_model(cfg, task)
    (hook,) = curriculum_hooks(task)
    old = object()
    trainer = SimpleNamespace(model=model, cfg=cfg, optimizer=old)
    assert hook.lr_factor(trainer, 5) == 1.0
    hook.on_eval(trainer, 1000, {"eval/hop_2/accuracy": 1.0})
    assert trainer.optimizer is not old
    warmup = cfg.train.warmup_steps
    assert hook.lr_factor(trainer, 1000) == 1 / warmup and hook.lr_factor(trainer, 1000 + warmup) == 1.0


def test_resume_with_curriculum_is_exact(tmp_path: Path):
    overrides = [f"task.{k}={v}" for k, v in DEPTH.items()] + [
        "task.curriculum_threshold=0.05",
        "task.curriculum_max_hops=0",
        "model.d_model=16",
        "model.n_heads=2",
        "model.n_loops=2",
        "train.steps=30",
        "train.batch_size=16",
        "train.eval_every=5",
        "train.checkpoint_every=10",
        "train.keep_checkpoints=0",
        "train.warmup_steps=2",
        "train.threads=1",
    ]
    ref = tmp_path / "ref"
    summary = train_run(resolve("kg-depth-curriculum", overrides), ref, progress=False)
    state = json.loads((ref / "checkpoints" / "step_0000010.json").read_text())
    assert state["hooks"]["curriculum"]["stage"] > 2, "the curriculum must have advanced by the checkpoint"

    run = tmp_path / "resumed"
    shutil.copytree(ref, run)
    for name in ("summary.json", "final.safetensors"):
        (run / name).unlink()
    for path in (run / "checkpoints").glob("step_00000[23]0.*"):
        path.unlink()
    again = train_run(resolve("kg-depth-curriculum", overrides), run, resume=True, progress=False)
    assert (run / "final.safetensors").read_bytes() == (ref / "final.safetensors").read_bytes()
    assert again["learnable_depth"] == summary["learnable_depth"]
    assert (run / "metrics.jsonl").read_text() != "" and again["final"] == summary["final"]


def tiny_depth(*extra: str) -> list[str]:
    return [f"task.{k}={v}" for k, v in DEPTH.items()] + [
        "task.curriculum_max_hops=0",
        "model.d_model=16",
        "model.n_heads=2",
        "model.n_layers=2",
        "model.n_loops=3",
        "train.steps=40",
        "train.batch_size=16",
        "train.eval_every=5",
        "train.checkpoint_every=10",
        "train.warmup_steps=2",
        *extra,
    ]


def test_a_compute_budget_ends_the_run_at_equal_layer_passes(tmp_path: Path):
    summary = train_run(
        resolve("kg-depth-curriculum", tiny_depth("train.budget_layer_passes=45")),
        tmp_path / "r",
        progress=False,
    )
    # 2 layers x R = 3 per step: 45 passes are spent during step 8, which is then evaluated
    assert summary["stopped_by"] == "budget" and summary["steps"] == 8 and summary["layer_passes"] == 48
    last = json.loads((tmp_path / "r" / "metrics.jsonl").read_text().splitlines()[-1])
    assert last["step"] == 8 and last["layer_passes"] == 48 and "eval/hop_2/accuracy" in last


def test_a_stalled_curriculum_ends_the_run(tmp_path: Path):
    overrides = tiny_depth("task.curriculum_threshold=1.0", "task.curriculum_patience=3")
    summary = train_run(resolve("kg-depth-curriculum", overrides), tmp_path / "r", progress=False)
    assert summary["steps"] == 15 and summary["stopped_by"].startswith("curriculum stalled")
    plain = train_run(resolve("kg-depth-curriculum", tiny_depth()), tmp_path / "plain", progress=False)
    assert (
        plain["stopped_by"] in ("steps", "curriculum complete")
        and plain["layer_passes"] == 6 * plain["steps"]
    )


def test_the_curriculum_stops_below_the_deepest_test_hops():
    task = KGTask(KGTaskConfig(**DEPTH, curriculum=True, curriculum_max_hops=3), seed=0)
    (hook,) = curriculum_hooks(task)
    trainer = SimpleNamespace()
    for step, k in ((5, 2), (10, 3)):
        hook.on_eval(trainer, step, {f"eval/hop_{k}/accuracy": 1.0})
    assert hook.learnable_depth == 3 and hops_in_training(task) == {1, 2, 3}
    assert hook.stop_reason(trainer) == "curriculum complete" and "hop_4" in task.tests


@pytest.mark.parametrize(
    "override, message",
    [
        ("train.budget_layer_passes=0", "must be positive"),
        ("task.curriculum_patience=-1", "must be >= 0"),
        ("task.curriculum_max_hops=1", "must be in 2..task.max_hops"),
    ],
)
def test_bad_budgets_are_refused(override, message):
    with pytest.raises(UserError, match=message):
        resolve("kg-depth-curriculum", [override])
