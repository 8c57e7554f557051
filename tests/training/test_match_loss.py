"""The supervised matching head (train.match_loss): a term on one head's attention, not the model."""

import json
from pathlib import Path

import pytest
import torch
from test_interventions import TINY_HORN, run_steps, trainer_for

from symgen.config import resolve
from symgen.errors import UserError
from symgen.models.attention import recorded_attention
from symgen.tasks.horn_matching import repeated_positions
from symgen.training.build import load_run
from symgen.training.match_loss import match_weight_at, matching_loss
from symgen.training.run import train_run
from symgen.training.stacked import train_seeds

MATCH = ["train.match_loss=1.0", "train.lr=0.01"]


def head0_share(trainer) -> float:
    """Head 0's mean share on earlier copies, over a fresh training batch."""
    batch = trainer.task.train_batch(10_000, 16)
    pairs = repeated_positions(batch.inputs, [batch.inputs.shape[1]] * len(batch.inputs), trainer.symbols)
    with torch.no_grad(), recorded_attention(trainer.model) as recorded:
        trainer.model(batch.inputs)
    share = (recorded[0][0][:, 0] * pairs).sum(-1)
    return float(share[pairs.any(-1)].mean())


def test_the_loss_is_small_where_head_0_attends_to_the_earlier_copies_and_large_elsewhere():
    ids = torch.tensor([[1, 2, 1, 3]])  # position 2 repeats position 0's symbol
    symbols = torch.tensor([False, True, True, True])
    on_copy = torch.zeros(1, 2, 4, 4)
    on_copy[0, :, 2, 0] = 1.0
    elsewhere = torch.zeros(1, 2, 4, 4)
    elsewhere[0, 0, 2, 1] = 1.0
    elsewhere[0, 1, 2, 0] = 1.0  # head 1 matching does not count: the term teaches head 0
    assert float(matching_loss(on_copy, ids, symbols)) == pytest.approx(0.0, abs=1e-5)
    assert float(matching_loss(elsewhere, ids, symbols)) > 10
    assert float(matching_loss(on_copy, torch.tensor([[1, 2, 3, 0]]), symbols)) == 0.0  # nothing repeats


def test_the_weight_holds_until_its_last_step_then_is_zero():
    cfg = resolve("horn-standard", TINY_HORN + ["train.match_loss=0.5", "train.match_loss_until=10"]).train
    assert [match_weight_at(cfg, s) for s in (0, 9, 10, 50)] == [0.5, 0.5, 0.0, 0.0]
    assert match_weight_at(resolve("horn-standard", TINY_HORN).train, 0) == 0.0


def test_training_with_the_term_teaches_head_0_to_match_and_without_it_does_not(tmp_path: Path):
    torch.manual_seed(0)
    taught = trainer_for(tmp_path / "taught", MATCH)
    plain = trainer_for(tmp_path / "plain", ["train.lr=0.01"])
    plain.symbols = taught.symbols
    before = head0_share(taught)
    run_steps(taught, 40)
    run_steps(plain, 40)
    assert head0_share(taught) > before + 0.3
    assert head0_share(taught) > head0_share(plain) + 0.3


def test_a_block_the_model_lacks_is_refused():
    with pytest.raises(UserError, match="match_loss_blocks"):
        resolve("horn-standard", TINY_HORN + ["train.match_loss=1", "train.match_loss_blocks=[0,5]"])
    with pytest.raises(UserError, match="match_loss_blocks"):
        resolve("horn-standard", TINY_HORN + ["train.match_loss=1", "train.match_loss_blocks=[]"])
    with pytest.raises(UserError, match="match_loss"):
        resolve("horn-standard", TINY_HORN + ["train.match_loss=-1"])


def test_stacked_seeds_train_with_the_term_as_each_seed_alone_does(tmp_path: Path):
    overrides = [*TINY_HORN, *MATCH, "train.steps=6", "train.eval_every=6", "train.checkpoint_every=6"]
    cfg = resolve("horn-standard", overrides)
    train_seeds(cfg, [0, 1], tmp_path / "stacked", progress=False)
    train_run(resolve("horn-standard", [*overrides, "seed=1"]), tmp_path / "alone", progress=False)
    _, _, stacked = load_run(tmp_path / "stacked" / "seed-1")
    _, _, alone = load_run(tmp_path / "alone")
    for (name, a), b in zip(stacked.state_dict().items(), alone.state_dict().values(), strict=True):
        assert torch.allclose(a, b, atol=1e-5), name
    logged = [json.loads(line) for line in (tmp_path / "stacked" / "seed-1" / "metrics.jsonl").open()]
    assert any(r.get("train/match_loss", 0) > 0 for r in logged)
