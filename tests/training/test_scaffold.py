"""The same-symbol term as a scaffold (model.identity_bias_fade) and a planted same-token head
(model.match_init)."""

from pathlib import Path

import pytest
import torch
from test_interventions import TINY_HORN, run_steps, trainer_for

from symgen.config import resolve
from symgen.errors import UserError
from symgen.models.transformer import ModelConfig, Transformer
from symgen.training.build import load_run
from symgen.training.run import train_run
from symgen.training.stacked import train_seeds

SCAFFOLD = ["model.identity_bias=3.0", "model.identity_bias_scope=symbols", "model.identity_bias_fade=[2,6]"]


def test_the_fade_falls_linearly_from_start_to_end():
    cfg = ModelConfig(identity_bias=3.0, identity_bias_fade=[10, 30])
    assert [cfg.same_symbol_weight_at(s) for s in (0, 10, 20, 30, 99)] == [1.0, 1.0, 0.5, 0.0, 0.0]
    assert ModelConfig(identity_bias=3.0).same_symbol_weight_at(99) == 1.0


@pytest.mark.parametrize("fade, bias", [([5], 3.0), ([6, 6], 3.0), ([-1, 4], 3.0), ([1, 4], None)], ids=str)
def test_a_bad_fade_is_refused(fade, bias):
    with pytest.raises(UserError, match="identity_bias_fade"):
        ModelConfig(vocab_size=10, max_seq_len=8, identity_bias=bias, identity_bias_fade=fade).validate()


def test_after_the_fade_the_model_computes_what_it_computes_without_the_term(tmp_path: Path):
    trainer = trainer_for(tmp_path, SCAFFOLD)
    betas = [b.attn.same_symbol.detach().clone() for b in trainer.model.blocks]
    run_steps(trainer, 7)
    model = trainer.model
    assert float(model.same_symbol_weight) == 0.0
    # beta stays where it started: a learned beta could make up for the fading weight
    assert all(torch.equal(b.attn.same_symbol, before) for b, before in zip(model.blocks, betas, strict=True))
    plain = Transformer(ModelConfig(**{**vars(model.cfg), "identity_bias": None, "identity_bias_fade": []}))
    state = {k: v for k, v in model.state_dict().items() if "same_symbol" not in k}
    plain.load_state_dict(state)
    ids = torch.randint(0, model.cfg.vocab_size, (2, 12))
    assert torch.allclose(model.eval()(ids).logits, plain.eval()(ids).logits, atol=1e-6)
    model.same_symbol_weight.fill_(1.0)  # with the term on, the same weights compute something else
    assert not torch.allclose(model(ids).logits, plain(ids).logits, atol=1e-3)


def test_the_saved_model_keeps_the_faded_weight_and_stacked_seeds_share_the_schedule(tmp_path: Path):
    overrides = [
        *TINY_HORN,
        *SCAFFOLD,
        "model.copy_layers=[0]",
        "train.steps=8",
        "train.eval_every=8",
        "train.checkpoint_every=8",
    ]
    train_run(resolve("horn-copy-frozen", overrides), tmp_path / "single", progress=False)
    _, _, model = load_run(tmp_path / "single")
    assert float(model.same_symbol_weight) == 0.0
    train_seeds(resolve("horn-copy-frozen", overrides), [0, 1], tmp_path / "stacked", progress=False)
    for seed in (0, 1):
        _, _, seeded = load_run(tmp_path / "stacked" / f"seed-{seed}")
        assert float(seeded.same_symbol_weight) == 0.0


def test_a_planted_head_starts_with_keys_equal_to_queries_and_matches_repeated_tokens():
    torch.manual_seed(0)
    cfg = ModelConfig(vocab_size=50, max_seq_len=16, d_model=64, n_heads=4, n_layers=1, positions="none")
    plain, planted = Transformer(cfg), Transformer(ModelConfig(**{**vars(cfg), "match_init": 3.0}))
    qkv = planted.blocks[0].attn.qkv.weight
    assert torch.equal(qkv[:64], qkv[64:128]) and not torch.equal(qkv[:64], qkv[128:])
    ids = torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8, 2]])  # the last token repeats position 1's

    def share(model: Transformer) -> float:
        from symgen.models.attention import recorded_attention

        with recorded_attention(model) as recorded:
            model(ids)
        return float(recorded[0][0][0, :, -1, 1].max())

    assert share(planted) > 0.3 > share(plain)
