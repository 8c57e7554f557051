from pathlib import Path

import pytest
import torch

from symgen.config import resolve
from symgen.errors import UserError
from symgen.experiments.suite import _dependency_order
from symgen.experiments.types import RunSpec
from symgen.measures.collapse import pairwise_cosines
from symgen.tasks.registry import make_task
from symgen.training.build import build_model
from symgen.training.init import initialize
from symgen.training.run import train_run

SMALL = [
    "model.d_model=32",
    "model.n_heads=2",
    "task.n_test=32",
    "train.steps=20",
    "train.eval_every=10",
    "train.checkpoint_every=100",
    "train.batch_size=16",
]


def _symbols(task, batch) -> set[int]:
    """Ids of the words and reserved tokens in a batch (not the special or Horn tokens)."""
    ids = set(batch.inputs.flatten().tolist())
    return ids & (set(task.seen_ids()) | set(task.unseen_ids()))


@pytest.mark.parametrize("problem", ["reverse", "horn"])
def test_reserved_tokens_never_occur_in_pretraining_and_are_all_a_finetune_uses(problem: str):
    kind = [f"task.problem={problem}"]
    pre = make_task(resolve("transfer-pretrain", kind).task, 0)
    reserved = set(pre.unseen_ids())
    for step in range(5):
        assert not reserved & set(pre.train_batch(step, 32).inputs.flatten().tolist())
    reserved_cfg = resolve("transfer-finetune", [*kind, "task.symbols=reserved", "task.n_symbols=10"])
    ft = make_task(reserved_cfg.task, 0)
    symbols = _symbols(ft, ft.train_batch(0, 64))
    assert symbols and symbols <= set(ft.unseen_ids()[:10])
    ordinary = make_task(resolve("transfer-finetune", [*kind, "task.symbols=ordinary"]).task, 0)
    ft_words = _symbols(ordinary, ordinary.train_batch(0, 64))
    pretrain_words = _symbols(pre, pre.pretrain_problems.train_batch(0, 64))
    assert ft_words <= set(ordinary.seen_ids()) and pretrain_words <= set(pre.seen_ids())
    assert ft_words and pretrain_words and not ft_words & pretrain_words  # words never used as variables


def test_horn_finetune_scores_held_out_problems_over_its_symbols(tmp_path: Path):
    cfg = resolve("transfer-finetune", [*SMALL, "task.problem=horn", "task.horn.n_test=8", "train.steps=2"])
    task = make_task(cfg.task, cfg.seed)
    assert all(t in task.vocab for t in ("->", "<cot>", "<ans>"))
    held_out = task.problems.test["all_seen"]
    assert len(held_out) == 8 and all(r["query"].startswith("<unused") for r in held_out)
    metrics = train_run(cfg, tmp_path / "ft", progress=False)["final"]
    assert 0.0 <= metrics["eval/exact_match"] <= 1.0 and "eval/token_accuracy/rule" in metrics


def test_bad_problem_is_a_user_error():
    with pytest.raises(UserError, match="task.problem"):
        resolve("transfer-pretrain", ["task.problem=sudoku"]).task.validate()


def test_finetune_starts_from_the_pretrained_weights_and_repair_spreads_only_reserved_rows(tmp_path: Path):
    train_run(resolve("transfer-pretrain", SMALL), tmp_path / "pre", progress=False)
    pretrained = build_model(
        resolve("transfer-pretrain", SMALL), make_task(resolve("transfer-pretrain").task, 0)
    )
    from symgen.training.checkpoint import load_weights

    load_weights(pretrained, tmp_path / "pre")
    cfg = resolve(
        "transfer-finetune", [*SMALL, f"train.init_from={tmp_path / 'pre'}", "train.init_repair=random"]
    )
    task = make_task(cfg.task, cfg.seed)
    model = build_model(cfg, task)
    with torch.no_grad():  # make the reserved rows collapsed, as a long pretraining would
        model.embed.weight[task.unseen_ids()] = 0.5
    initialize(model, cfg, task)
    seen, unseen = task.seen_ids(), task.unseen_ids()
    assert torch.equal(model.embed.weight[seen], pretrained.embed.weight[seen])
    assert float(pairwise_cosines(model.embed.weight[unseen]).mean()) < 0.3
    weight = model.embed.weight.detach()
    ratio = weight[unseen].norm(dim=1).mean() / weight[seen].norm(dim=1).mean()
    assert 0.7 < float(ratio) < 1.3


def test_each_seed_of_a_finetune_starts_from_its_own_seed_of_a_stacked_pretraining(tmp_path: Path):
    from symgen.training.checkpoint import load_weights
    from symgen.training.stacked import train_seeds

    pretrain = resolve("transfer-pretrain", [*SMALL, "train.steps=4"])
    train_seeds(pretrain, [0, 1], tmp_path / "pre", progress=False)
    cfg = resolve("transfer-finetune", [*SMALL, f"train.init_from={tmp_path / 'pre'}", "seed=1"])
    task = make_task(cfg.task, cfg.seed)
    model, own, other = build_model(cfg, task), build_model(cfg, task), build_model(cfg, task)
    initialize(model, cfg, task)
    load_weights(own, tmp_path / "pre" / "seed-1")
    load_weights(other, tmp_path / "pre" / "seed-0")
    assert torch.equal(model.embed.weight, own.embed.weight)
    assert not torch.equal(model.embed.weight, other.embed.weight)
    missing = resolve("transfer-finetune", [*SMALL, f"train.init_from={tmp_path / 'pre'}", "seed=2"])
    with pytest.raises(UserError, match="seed-2"):
        initialize(build_model(missing, task), missing, task)


def test_a_finetune_is_seeded_like_the_run_it_starts_from():
    from symgen.experiments.suite import seeded

    runs = [RunSpec("pre", "r"), RunSpec("ft", "r", after=["pre"]), RunSpec("own", "r", ["seed=7"])]
    assert [r.seeds for r in seeded(runs, (0, 1, 2))] == [(0, 1, 2), (0, 1, 2), ()]


def test_init_from_a_missing_run_is_a_user_error(tmp_path: Path):
    cfg = resolve("transfer-finetune", [*SMALL, f"train.init_from={tmp_path / 'nothing'}"])
    with pytest.raises(UserError, match="no finished run"):
        train_run(cfg, tmp_path / "ft", progress=False)


def test_runs_are_ordered_after_their_dependencies():
    runs = [RunSpec("ft", "r", after=["pre"]), RunSpec("other", "r"), RunSpec("pre", "r")]
    assert [r.name for r in _dependency_order(runs)] == ["pre", "ft", "other"]
    with pytest.raises(UserError, match="cycle"):
        _dependency_order([RunSpec("a", "r", after=["b"]), RunSpec("b", "r", after=["a"])])
    assert RunSpec("x", "r", ["train.init_from={runs}/pre"]).resolved_overrides(Path("/o")) == [
        "train.init_from=/o/pre"
    ]
