"""Seed-stacked training: one stacked model, one ordinary run per seed, each matching its own
single-seed run."""

import json
from pathlib import Path

import pytest
import torch
from conftest import symgen

from symgen.cli.seeds import parse_seeds
from symgen.config import resolve
from symgen.errors import UserError
from symgen.models.stacking import share_seed, stack
from symgen.models.transformer import ModelConfig, Transformer
from symgen.training.build import load_run
from symgen.training.run import train_run
from symgen.training.stacked import train_seeds

HORN = [
    "task.n_seen=20",
    "task.n_unseen=10",
    "task.n_test=8",
    "model.d_model=32",
    "model.n_heads=2",
    "model.n_layers=2",
    "model.copy_layers=[1]",
    "model.identity_bias=3.0",
    "train.freeze_embeddings=true",
    "train.intervention_rows=symbols",
    "train.batch_size=8",
    "train.steps=20",
    "train.eval_every=10",
    "train.checkpoint_every=10",
    "train.warmup_steps=5",
]
KG = [
    "task.entities=12",
    "task.relations=3",
    "task.per_hop=40",
    "task.test_per_hop=20",
    "task.max_hops=6",
    "task.curriculum_max_hops=4",
    "task.curriculum_threshold=0.01",  # a stage passes at every evaluation: resets and restarts
    "task.n_eval_train=50",
    "train.budget_layer_passes=null",
    "train.steps=40",  # the curriculum completes at step 30 and ends the run
    "train.eval_every=10",
    "train.batch_size=32",
    "train.warmup_steps=5",
]


def records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def assert_same_metrics(stacked: Path, single: Path) -> None:
    a, b = records(stacked), records(single)
    assert [r["step"] for r in a] == [r["step"] for r in b]
    for x, y in zip(a, b, strict=True):
        assert set(x) == set(y)
        for key in x:
            if key not in ("elapsed_s",):
                assert x[key] == pytest.approx(y[key], rel=1e-3, abs=1e-3), (x["step"], key)


def test_stacked_forward_equals_each_seed_alone():
    cfg = ModelConfig(
        vocab_size=40, d_model=32, n_heads=2, n_layers=2, max_seq_len=16, tied=False,
        copy_layers=[1], identity_bias=2.0, n_loops=3,
    )  # fmt: skip
    models = []
    for seed in range(3):
        torch.manual_seed(seed)
        models.append(Transformer(cfg))
    stacked = stack(models)
    assert stacked.n_seeds == 3 and models[0].n_seeds == 1
    ids = torch.randint(0, 40, (3, 5, 16))
    select = torch.rand(3, 5, 16) < 0.4
    loops = [1, 3, 2]
    out = stacked(ids.flatten(0, 1), select=select.flatten(0, 1), n_loops=loops).logits
    alone = [m(ids[s], select=select[s], n_loops=loops[s]).logits for s, m in enumerate(models)]
    torch.testing.assert_close(out, torch.cat(alone), atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="2 iteration counts for a model of 3 seeds"):
        stacked(ids.flatten(0, 1), n_loops=[1, 3])


def test_a_shared_seed_is_a_view_of_the_stacked_parameters():
    cfg = ModelConfig(vocab_size=20, d_model=16, n_heads=2, n_layers=1, max_seq_len=8)
    models = [Transformer(cfg) for _ in range(2)]
    stacked = stack(models)
    share_seed(models[1], stacked, 1)
    with torch.no_grad():
        models[1].embed.weight[3] = 7.0
    assert torch.all(stacked.embed.weight[1, 3] == 7.0) and not torch.any(stacked.embed.weight[0, 3] == 7.0)


def test_stacked_seeds_match_single_runs_with_frozen_rows(tmp_path: Path):
    cfg = resolve("horn-copy-frozen-same-symbol", HORN)
    summaries = train_seeds(cfg, [0, 3], tmp_path / "stacked", progress=False)
    assert [s["stacked_seeds"] for s in summaries] == [2, 2]
    train_run(resolve("horn-copy-frozen-same-symbol", [*HORN, "seed=3"]), tmp_path / "single", progress=False)
    assert_same_metrics(tmp_path / "stacked" / "seed-3", tmp_path / "single")
    run_cfg, _, model = load_run(tmp_path / "stacked" / "seed-3")
    assert run_cfg.seed == 3 and model.n_seeds == 1


def test_stacked_seeds_match_single_runs_with_dynamic_loops_and_a_curriculum(tmp_path: Path):
    cfg = resolve("kg-depth-dynamic", KG)
    train_seeds(cfg, [0, 2], tmp_path / "stacked", progress=False)
    train_run(resolve("kg-depth-dynamic", [*KG, "seed=2"]), tmp_path / "single", progress=False)
    assert_same_metrics(tmp_path / "stacked" / "seed-2", tmp_path / "single")
    summary = json.loads((tmp_path / "stacked" / "seed-2" / "summary.json").read_text())
    assert summary["stopped_by"] == "curriculum complete" and summary["steps"] == 30


def test_a_seed_of_a_stacked_run_resumes_as_an_ordinary_run(tmp_path: Path):
    cfg = resolve("horn-copy-frozen-same-symbol", HORN)
    train_seeds(cfg, [0, 1], tmp_path / "stacked", progress=False)
    run = tmp_path / "stacked" / "seed-1"
    reference = records(run)
    (run / "summary.json").unlink()  # as if killed after its checkpoint at step 10
    seed_1 = resolve("horn-copy-frozen-same-symbol", [*HORN, "seed=1"])
    resumed = train_run(seed_1, run, resume=True, progress=False)
    assert resumed["steps"] == 20
    assert [r["step"] for r in records(run)] == [r["step"] for r in reference]
    assert records(run)[-1]["train/loss"] == pytest.approx(reference[-1]["train/loss"], rel=1e-3)


def test_a_stacked_run_resumes_only_with_its_seed_list(tmp_path: Path):
    cfg = resolve("horn-copy-frozen-same-symbol", [*HORN, "train.steps=2"])
    train_seeds(cfg, [0, 1], tmp_path / "run", progress=False)
    with pytest.raises(UserError, match="--seeds 0,1"):
        train_seeds(cfg, [0, 2], tmp_path / "run", resume=True, progress=False)
    again = train_seeds(cfg, [0, 1], tmp_path / "run", progress=False)
    assert all(s.get("skipped") for s in again)


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "empty"), (",", "empty"), ("0,0", "repeated"), ("1,-2", ">= 0"), ("a,b", "integers")],
)
def test_bad_seed_lists_are_refused(text: str, message: str):
    with pytest.raises(UserError, match=message):
        parse_seeds(text)


def test_cli_refuses_a_bad_seed_list_in_one_line(tmp_path: Path):
    done = symgen("train", "reverse", "--seeds", "0,0", "--out", str(tmp_path / "r"))
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0 and "repeated" in done.stderr
    assert not (tmp_path / "r").exists()


def test_stacked_seeds_refuse_torchrun(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(UserError, match="torchrun"):
        train_seeds(resolve("reverse", ["train.steps=2"]), [0, 1], tmp_path / "r", progress=False)
    assert not (tmp_path / "r").exists()


def test_a_stacked_run_resumes_only_with_its_own_seeds(tmp_path: Path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "seeds.json").write_text(json.dumps({"seeds": [0, 1]}))
    with pytest.raises(UserError, match="seeds 0,1; resume it with --seeds 0,1"):
        train_seeds(resolve("horn-copy-frozen", HORN), [0, 2], out, resume=True, progress=False)
    assert not (out / "seed-2").exists()  # refused before any seed folder was made
