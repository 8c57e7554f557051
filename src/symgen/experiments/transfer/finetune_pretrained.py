"""Claim A7.6 at paper scale: fine-tune a real pretrained causal LM (Gemma 3, any Hugging Face
causal LM, or a .gguf that transformers can read) on Horn-clause problems whose variables are its
collapsed reserved tokens, ordinary vocabulary tokens, or the reserved tokens repaired first.

The model sees token ids, not text: each variable is one vocabulary row, and the Horn syntax
(`-> . facts: ? <cot> <ans> True False`, the rule labels) uses the model's own token for that
string where the vocabulary has one, otherwise a spare ordinary token. The same trainer as every
symgen run does the fine-tuning (`symgen.models.hf.HFCausalLM` adapts the model). Evaluation is
the teacher-forced exact match on held-out problems, which equals greedy decoding's exact match.

Writes OUT/metrics.jsonl, OUT/summary.json (steps to 90 %, the token ids used) and
OUT/finetune.png.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from symgen.analysis.plots import line_figure
from symgen.analysis.pretrained_io import open_checkpoint, ordinary_ids, reserved_ids, resolve
from symgen.config import ExperimentConfig
from symgen.config.train import TrainConfig
from symgen.errors import UserError
from symgen.experiments.transfer.experiment import TARGET
from symgen.measures.metrics import curve, first_crossing, read_metrics
from symgen.measures.rows import new_rows
from symgen.models.hf import HFCausalLM
from symgen.tasks import horn
from symgen.tasks.base import Batch, Task, teacher_forced_scores
from symgen.tasks.horn_task import HornTask, HornTaskConfig, SymbolLayout
from symgen.tasks.transfer import TransferHornConfig
from symgen.training.distributed import resolve_device
from symgen.training.trainer import Trainer

SYMBOLS = ("reserved", "ordinary", "repaired")
# Horn token -> vocabulary strings that stand for it, tried in order (then with a word-start marker)
ALIASES = {
    horn.PAD: ["<pad>", "[PAD]", "<|finetune_right_pad_id|>"],
    horn.BOS: ["<bos>", "<s>", "[CLS]", "<|begin_of_text|>"],
    horn.EOS: ["<eos>", "</s>", "[SEP]", "<|end_of_text|>", "<|endoftext|>"],
    horn.FACTS: ["facts:", "facts"],
}
WORD_START = ("▁", "Ġ", " ")


@dataclass
class FinetuneSettings:
    symbols: str = "reserved"  # reserved | ordinary | repaired
    n_symbols: int = 100  # variables the problems draw from (at most the reserved tokens found)
    steps: int = 2000
    batch_size: int = 32
    lr: float = 1e-4
    weight_decay: float = 0.0
    eval_every: int = 50
    seed: int = 0
    device: str = "auto"


def syntax_ids(vocab: list[str] | None, names: list[str], spare: list[int]) -> dict[str, int]:
    """A distinct token id for every Horn syntax token: the vocabulary's own token where it has
    one, otherwise the next spare id."""
    index = {s: i for i, s in enumerate(vocab or [])}
    out: dict[str, int] = {}
    spare = list(spare)
    for name in names:
        found = None
        for alias in ALIASES.get(name, [name]):
            for s in (alias, *(m + alias for m in WORD_START)):
                if s in index and index[s] not in out.values():
                    found = index[s]
                    break
            if found is not None:
                break
        out[name] = found if found is not None else spare.pop()
    return out


class PretrainedHornTask(Task):
    """Horn-clause problems over a pretrained model's token ids."""

    def __init__(
        self, cfg: HornTaskConfig, seed: int, vocab_size: int, variables: list[int], syntax: dict[str, int]
    ):
        names = [f"<id{i}>" for i in range(vocab_size)]
        for name, i in syntax.items():
            names[i] = name
        symbols = [names[i] for i in variables]
        self.vocab = names
        self.horn = HornTask(cfg, seed, SymbolLayout(names, symbols, [], ("all_seen",)))

    @property
    def max_seq_len(self) -> int:
        return self.horn.max_seq_len

    def train_batch(self, step: int, batch_size: int) -> Batch:
        return self.horn.train_batch(step, batch_size)

    def evaluate(self, model: HFCausalLM, device: torch.device, full: bool = True) -> dict[str, float]:
        records, size = self.horn.test["all_seen"], self.horn.cfg.eval_batch_size
        chunks = (self.horn.batch(records[i : i + size]) for i in range(0, len(records), size))
        return teacher_forced_scores(model, chunks, device)


def _load_causal_lm(model: str) -> torch.nn.Module:
    try:
        from transformers import AutoModelForCausalLM
        from transformers.utils import logging as hf_logging
    except ImportError:
        raise UserError(
            "fine-tuning a pretrained model needs transformers: pip install 'symgen[models]'"
        ) from None
    kind, path = resolve(model)
    hf_logging.set_verbosity_error()  # its load report would bury the one line that matters
    source, gguf = (path.parent, {"gguf_file": path.name}) if kind == "gguf" else (path, {})
    try:
        net, info = AutoModelForCausalLM.from_pretrained(
            source, **gguf, dtype=torch.float32, output_loading_info=True
        )
    except (ValueError, OSError, KeyError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UserError(f"{model}: cannot load it as a causal language model ({first})") from None
    if info.get("missing_keys"):  # an encoder (BERT, say) gets a fresh, untrained LM head
        missing = sorted(info["missing_keys"])
        raise UserError(
            f"{model} is not a causal language model: its checkpoint lacks {', '.join(missing[:3])}"
        )
    return net


def _repair(net: HFCausalLM, reserved: np.ndarray, ordinary: np.ndarray, seed: int) -> None:
    """Re-initialize the reserved rows (input and untied output) as `symgen tokens repair` does."""
    rng = np.random.default_rng(seed)
    matrices = [net.embed.weight] + ([] if net.tied else [net.hf.get_output_embeddings().weight])
    with torch.no_grad():
        for w in matrices:
            fresh = new_rows(w[ordinary].double().cpu().numpy(), len(reserved), "random", rng)
            w[torch.from_numpy(reserved)] = torch.from_numpy(fresh).to(w.dtype)


def finetune(
    model: str, out: Path, s: FinetuneSettings, horn_cfg: HornTaskConfig | None = None
) -> dict[str, Any]:
    if s.symbols not in SYMBOLS:
        raise UserError(f"--symbols {s.symbols!r}: allowed are {', '.join(SYMBOLS)}")
    out = Path(out)
    if (out / "metrics.jsonl").exists():
        raise UserError(f"{out} already holds a fine-tune; choose a new --out")
    horn_cfg = horn_cfg or TransferHornConfig()
    horn_cfg.validate()
    ck = open_checkpoint(model)
    reserved = reserved_ids(ck, None)
    # a random order of the ordinary rows: the spare syntax ids, the ordinary variables and the rows
    # whose statistics a repair draws from are samples of the whole vocabulary, not its lowest ids
    ordinary = np.random.default_rng(s.seed).permutation(ordinary_ids(ck, reserved, ck.rows, s.seed))
    names = (
        list(horn.SPECIAL_TOKENS)
        + [horn.rule_label(i) for i in range(horn_cfg.max_rules)] * horn_cfg.rule_labels
    )
    syntax = syntax_ids(ck.vocab, names, ordinary[-len(names) :].tolist())
    n = min(s.n_symbols, len(reserved))
    if n < horn_cfg.horn_config(s.seed).min_atoms():
        raise UserError(f"{model}: {len(reserved)} reserved tokens, too few for these Horn problems")
    candidates = reserved if s.symbols != "ordinary" else ordinary[: -len(names)]
    variables = [int(i) for i in candidates if int(i) not in syntax.values()][:n]

    net = HFCausalLM(_load_causal_lm(model))
    if s.symbols == "repaired":
        _repair(net, reserved, ordinary[:10000], s.seed)  # 10k rows pin down the statistics
    task = PretrainedHornTask(horn_cfg, s.seed, net.embed.weight.shape[0], variables, syntax)
    train = TrainConfig(
        steps=s.steps, batch_size=s.batch_size, lr=s.lr, weight_decay=s.weight_decay,
        embed_weight_decay=s.weight_decay, warmup_steps=min(50, s.steps // 10), eval_every=s.eval_every,
        checkpoint_every=s.steps,  # a pretrained model's checkpoint is large: none mid-run
    )  # fmt: skip
    cfg = ExperimentConfig(
        name=f"finetune-{s.symbols}", seed=s.seed, device=s.device, task=horn_cfg, train=train
    )
    cfg.validate()
    device = resolve_device(s.device)
    out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    final = Trainer(cfg, task, net.to(device), out, device).fit()
    records = read_metrics(out)
    summary = {
        "model": model,
        "symbols": s.symbols,
        "target": TARGET,
        "steps_to_target": first_crossing(records, "eval/exact_match", TARGET),
        "steps": s.steps,
        "seconds": round(time.time() - started, 1),
        "variables": variables,
        "syntax": syntax,
        "final": final,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    line_figure(
        out / "finetune.png",
        {s.symbols: curve(records, "eval/exact_match")},
        "fine-tuning step",
        "held-out exact match",
        f"{model}: Horn problems over {s.symbols} tokens",
        ylim=(0, 1.02),
    )
    return summary
