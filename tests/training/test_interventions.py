import json
from pathlib import Path

import pytest
import torch

from symgen.config import resolve
from symgen.errors import UserError
from symgen.tasks.registry import make_task
from symgen.training.build import build_model
from symgen.training.interventions import ForgetHook, FreezeHook, build_hooks, reset_generator
from symgen.training.run import train_run
from symgen.training.trainer import Trainer

TINY_HORN = [
    "task.n_seen=20",
    "task.n_unseen=12",
    "task.min_rules=2",
    "task.max_rules=3",
    "task.min_facts=2",
    "task.max_facts=2",
    "task.max_body=2",
    "task.max_depth=1",
    "task.n_test=6",
    "model.d_model=32",
    "model.n_heads=2",
    "model.n_layers=1",
    "train.batch_size=8",
    "train.warmup_steps=2",
    "train.lr=0.01",
    "train.weight_decay=0.5",
    "train.threads=1",
]


def trainer_for(tmp_path: Path, overrides: list[str]) -> Trainer:
    cfg = resolve("horn-standard", TINY_HORN + overrides)
    task = make_task(cfg.task, cfg.seed)
    model = build_model(cfg, task)
    return Trainer(
        cfg, task, model, tmp_path, torch.device("cpu"), hooks=build_hooks(cfg, task), progress=False
    )


def run_steps(trainer: Trainer, n: int) -> None:
    for hook in trainer.hooks:
        hook.on_start(trainer)
    for step in range(n):
        trainer.train_step(step)
        trainer.step = step + 1


def rows(trainer: Trainer) -> list[torch.Tensor]:
    m = trainer.model
    return [m.embed.weight.detach().clone()] + (
        [m.unembed.weight.detach().clone()] if m.unembed is not None else []
    )


@pytest.mark.parametrize("tied", [True, False])
def test_freeze_keeps_all_rows_bit_identical_under_weight_decay(tmp_path, tied):
    trainer = trainer_for(tmp_path, ["train.freeze_embeddings=true", f"model.tied={str(tied).lower()}"])
    assert any(isinstance(h, FreezeHook) for h in trainer.hooks)
    before = rows(trainer)
    other = trainer.model.blocks[0].mlp.up.weight.detach().clone()
    run_steps(trainer, 6)
    for a, b in zip(before, rows(trainer), strict=True):
        assert torch.equal(a, b)
    assert not torch.equal(other, trainer.model.blocks[0].mlp.up.weight)  # the rest trains


def test_freeze_of_unseen_rows_only_lets_seen_rows_train(tmp_path):
    trainer = trainer_for(tmp_path, ["train.freeze_embeddings=true", "train.intervention_rows=unseen"])
    unseen, seen = trainer.task.unseen_ids(), trainer.task.seen_ids()
    before = rows(trainer)[0]
    run_steps(trainer, 5)
    after = rows(trainer)[0]
    assert torch.equal(before[unseen], after[unseen])
    assert not torch.equal(before[seen], after[seen])


def test_without_freeze_unseen_rows_move(tmp_path):
    trainer = trainer_for(tmp_path, [])
    unseen = trainer.task.unseen_ids()
    before = rows(trainer)[0]
    run_steps(trainer, 5)
    assert not torch.equal(rows(trainer)[0][unseen], before[unseen])  # decay and the softmax push


@pytest.mark.parametrize("tied", [True, False])
def test_forgetting_redraws_rows_and_zeroes_their_adam_moments(tmp_path, tied):
    k = 4
    trainer = trainer_for(tmp_path, [f"train.forget_every={k}", f"model.tied={str(tied).lower()}"])
    hook = next(h for h in trainer.hooks if isinstance(h, ForgetHook))
    run_steps(trainer, k)  # steps 0..k-1: no reset yet
    assert hook.resets == []
    params = [trainer.model.embed.weight] + ([trainer.model.unembed.weight] if not tied else [])
    for p in params:
        assert trainer.optimizer.state[p]["exp_avg"].abs().sum() > 0
    trainer.train_step(k)  # the update of step k, then the reset
    assert hook.resets == [k]
    for n, p in enumerate(params):
        expected = (
            torch.randn(p.shape, generator=reset_generator(0 + n, k, p.device)) * trainer.model.cfg.embed_std
        )
        assert torch.equal(p.detach(), expected)
        state = trainer.optimizer.state[p]
        assert state["exp_avg"].abs().sum() == 0 and state["exp_avg_sq"].abs().sum() == 0
        assert float(state["step"]) == 0  # every row re-drawn: bias correction starts over


def test_freeze_of_symbol_rows_lets_syntax_rows_train(tmp_path):
    trainer = trainer_for(tmp_path, ["train.freeze_embeddings=true", "train.intervention_rows=symbols"])
    symbols = sorted(set(trainer.task.unseen_ids()) | set(trainer.task.seen_ids()))
    syntax = trainer.task.encode(["->", "?", "True", "False"])
    assert not set(syntax) & set(symbols)
    before = rows(trainer)[0]
    run_steps(trainer, 5)
    after = rows(trainer)[0]
    assert torch.equal(before[symbols], after[symbols])
    assert not torch.equal(before[syntax], after[syntax])


def test_forgetting_unseen_rows_keeps_seen_rows_and_their_moments(tmp_path):
    trainer = trainer_for(tmp_path, ["train.forget_every=3", "train.intervention_rows=unseen"])
    unseen, seen = trainer.task.unseen_ids(), trainer.task.seen_ids()
    run_steps(trainer, 3)
    w = trainer.model.embed.weight
    before = w.detach().clone()
    trainer.train_step(3)
    state = trainer.optimizer.state[w]
    assert state["exp_avg"][unseen].abs().sum() == 0 and state["exp_avg_sq"][unseen].abs().sum() == 0
    assert state["exp_avg_sq"][seen].abs().sum() > 0
    assert float(state["step"]) == 4  # shared by rows that were not reset
    # unseen rows are fresh draws, not a decayed version of the old ones
    cos = torch.nn.functional.cosine_similarity(before[unseen], w.detach()[unseen], dim=1)
    assert cos.abs().max() < 0.9


def test_temporary_forgetting_stops_and_never_resets_after_the_last_step():
    hook = ForgetHook(None, every=5, until=12, seed=0)
    assert [s for s in range(40) if hook.due(s, 40)] == [5, 10]
    always = ForgetHook(None, every=5, until=0, seed=0)
    assert [s for s in range(21) if always.due(s, 21)] == [5, 10, 15]  # not 20: the last step


def test_a_schedule_that_ends_on_a_reset_redraws_the_rows_after_the_last_step(tmp_path):
    last = ForgetHook(None, every=5, until=0, seed=0, last=True)
    assert [s for s in range(21) if last.due(s, 21)] == [5, 10, 15, 20]
    trainer = trainer_for(
        tmp_path,
        [
            "train.steps=7",
            "train.forget_every=5",
            "train.forget_last=true",
            "train.intervention_rows=symbols",
        ],
    )
    run_steps(trainer, 6)
    before = rows(trainer)[0]
    run_steps_from(trainer, 6, 7)
    after = rows(trainer)[0]
    symbols = sorted(set(trainer.task.seen_ids()) | set(trainer.task.unseen_ids()))
    others = sorted(set(range(after.shape[0])) - set(symbols))
    assert not torch.allclose(after[symbols], before[symbols], atol=1e-3)  # re-drawn, seen and unseen
    assert torch.allclose(after[others], before[others], atol=0.05)  # syntax rows only took one step
    assert next(h for h in trainer.hooks if isinstance(h, ForgetHook)).resets == [5, 6]


def run_steps_from(trainer: Trainer, start: int, end: int) -> None:
    for step in range(start, end):
        trainer.train_step(step)
        trainer.step = step + 1


def test_row_learning_rate_ratio_scales_only_the_embedding_groups(tmp_path):
    trainer = trainer_for(tmp_path, ["train.steps=4", "train.embed_lr_ratio=0.25"])
    run_steps(trainer, 3)
    lrs = {g["role"]: g["lr"] for g in trainer.optimizer.param_groups}
    assert lrs["embed"] == pytest.approx(0.25 * lrs["rest"]) and lrs["norm"] == lrs["rest"]
    with pytest.raises(UserError):
        resolve("horn-standard", TINY_HORN + ["train.embed_lr_ratio=0"])


def test_intervention_settings_are_validated():
    with pytest.raises(UserError):
        resolve("horn-standard", TINY_HORN + ["train.freeze_embeddings=true", "train.forget_every=5"])
    with pytest.raises(UserError):
        resolve("horn-standard", TINY_HORN + ["train.intervention_rows=some"])
    with pytest.raises(UserError):
        resolve("horn-standard", TINY_HORN + ["train.forget_until=100"])
    with pytest.raises(UserError):  # ending on a reset, and resets that stop before the end: one or other
        resolve(
            "horn-standard",
            TINY_HORN + ["train.forget_every=5", "train.forget_until=9", "train.forget_last=true"],
        )


def test_resume_is_exact_with_forgetting_and_redrawn_evaluation(tmp_path):
    args = TINY_HORN + [
        "train.steps=24",
        "train.forget_every=5",
        "train.eval_every=8",
        "train.checkpoint_every=8",
        "train.keep_checkpoints=0",
        "train.eval_redrawn=true",
    ]
    reference = train_run(resolve("horn-standard", args), tmp_path / "ref", progress=False)
    assert reference["forget_resets"] == 4  # after steps 5, 10, 15, 20
    assert "redrawn/all_unseen/exact_match" in reference["final"]
    assert "collapse/unseen_out_mean_cos" in reference["final"]

    run = tmp_path / "resumed"
    train_run(resolve("horn-standard", args), run, progress=False)
    for name in ("summary.json", "final.safetensors", "checkpoints/step_0000016.json"):
        (run / name).unlink()
    train_run(resolve("horn-standard", args), run, resume=True, progress=False)  # from step 8
    assert (run / "final.safetensors").read_bytes() == (tmp_path / "ref" / "final.safetensors").read_bytes()

    def lines(path: Path) -> list[dict]:
        out = [json.loads(x) for x in (path / "metrics.jsonl").read_text().splitlines()]
        return [{k: v for k, v in r.items() if k != "elapsed_s"} for r in out]

    assert lines(run) == lines(tmp_path / "ref")


def test_redrawn_evaluation_is_light_where_the_evaluation_is(tmp_path, monkeypatch):
    from symgen.tasks.horn_task import HornTask

    calls: list[bool] = []
    evaluate = HornTask.evaluate

    def recording(self, model, device, full=True):
        calls.append(full)
        return evaluate(self, model, device, full=full)

    monkeypatch.setattr(HornTask, "evaluate", recording)
    args = TINY_HORN + ["train.steps=16", "train.eval_every=8", "train.forget_every=5"]
    args += ["train.eval_redrawn=true", "train.light_evals=true"]
    train_run(resolve("horn-standard", args), tmp_path / "run", progress=False)
    assert calls == [False, False, True, True]  # step 8: model, re-drawn copy; step 16 (last): both full
