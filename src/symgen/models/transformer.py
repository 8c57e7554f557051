"""One decoder-only transformer for both papers.

token embedding (+ learned positions) → [pre-LN blocks] × R loops → final LayerNorm → unembedding.

- Paper A's copy attention is an extra head in chosen blocks (`copy_layers`); `identity_bias`
  adds a learned same-symbol term β_h · cos(e_i, e_j) of the raw embedding rows to every head.
- Paper B's recurrence applies the same block stack `n_loops` times (shared weights), optionally
  re-adding the input embeddings before each iteration and zero-initialising output projections
  so every block starts as the identity.
- `forward(..., return_hidden=True)` returns the residual stream after every layer of every
  iteration; `readout(h)` turns any of them into logits (final LayerNorm + unembedding). Logit
  lens, margins and halting all read from these two, never from a copy of the forward pass.
- Greedy decoding with a KV cache (`symgen.models.generate`) and the stacking of several seeds
  into one model (`symgen.models.stacking`) are functions of a model, in their own modules.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from symgen.errors import UserError
from symgen.models.attention import (
    CopyAttention,
    KVCache,
    SelfAttention,
    rotary_tables,
    same_symbol_scores,
)
from symgen.models.recurrence import HaltingRule
from symgen.models.stackable import Embedding, LayerNorm, Linear, linear, readout_selected, seeds_of

POSITIONS = ("learned", "rotary", "none")
COPY_VALUES = ("embedding", "residual")
IDENTITY_SCOPES = ("all", "symbols")


@dataclass
class ModelConfig:
    vocab_size: int = 0  # 0: taken from the task's vocabulary
    d_model: int = 128
    n_heads: int = 4
    n_layers: int = 2
    d_mlp: int = 0  # 0: 4 × d_model
    max_seq_len: int = 0  # 0: taken from the task's longest sequence
    positions: str = "learned"  # learned | rotary | none
    rotary_fraction: float = 1.0  # share of rotary frequencies kept; the rest compare content only
    tied: bool = True  # unembedding = embedding transposed
    n_loops: int = 1  # R: the whole block stack applied R times with shared weights
    zero_init: bool = False  # zero attention/MLP output projections: each block starts as identity
    input_injection: bool = False  # add the input embeddings before every iteration after the first
    copy_layers: list[int] = field(default_factory=list)  # blocks that carry a copy head
    copy_values: str = "embedding"  # embedding: paper A's copy head; residual: identity skip head
    copy_head_dim: int = 32
    copy_gate_init: float = 1.0
    identity_bias: float | None = None  # None: off; a number: same-symbol attention term, initial β
    identity_bias_detach: bool = False  # the term reads the rows without shaping them (no gradient)
    identity_bias_scope: str = "all"  # all: every token's row; symbols: the task's symbols only
    # > 0: every head starts as a same-token head (Zhang et al. 2022 planted one): its key projection
    # equals its query projection, scaled so that a token scores about this with its own content;
    # an initialization only, the architecture is unchanged
    match_init: float = 0.0
    # [start, end]: a scaffold. The term's weight falls linearly from 1 at training step `start` to 0
    # at `end`; from then on the model computes what it computes without the term (paper A's
    # architecture), and its saved weights say so (the weight is a buffer of the state dict)
    identity_bias_fade: list[int] = field(default_factory=list)
    # False: every position attends to every real one (a reader of whole prompts, answering at the
    # end: implicit Horn); keys holding pad_id are masked. No token-by-token generation then.
    causal: bool = True
    pad_id: int = -1  # -1: taken from the task
    dropout: float = 0.0
    bias: bool = True
    init_std: float = 0.02
    embed_init_std: float = 0.0  # 0: 1/sqrt(d_model), rows nearly orthogonal and of norm ~1
    # the input side reads every row times this (Gemma and Vaswani et al. use sqrt(d_model)); the
    # unembedding reads the rows as they are. Rows of norm ~1 are soon outweighed in the residual
    # stream, so later blocks see little of which symbol a position holds
    embed_scale: float = 1.0
    ln_eps: float = 1e-5

    def validate(self) -> None:
        if self.d_model <= 0 or self.n_heads <= 0 or self.n_layers <= 0 or self.n_loops <= 0:
            raise UserError("model.d_model, n_heads, n_layers and n_loops must be positive")
        if self.d_model % self.n_heads:
            raise UserError(f"model.d_model={self.d_model} must be divisible by model.n_heads={self.n_heads}")
        if self.positions not in POSITIONS:
            raise UserError(f"model.positions={self.positions!r}: allowed are {', '.join(POSITIONS)}")
        if self.copy_values not in COPY_VALUES:
            raise UserError(f"model.copy_values={self.copy_values!r}: allowed are {', '.join(COPY_VALUES)}")
        bad = [i for i in self.copy_layers if not 0 <= i < self.n_layers]
        if bad:
            raise UserError(f"model.copy_layers {bad} out of range 0..{self.n_layers - 1}")
        if not 0.0 <= self.dropout < 1.0:
            raise UserError(f"model.dropout={self.dropout} must be in [0, 1)")
        if not 0.0 <= self.rotary_fraction <= 1.0:
            raise UserError(f"model.rotary_fraction={self.rotary_fraction} must be in [0, 1]")
        if self.positions == "rotary" and (self.d_model // self.n_heads) % 2:
            raise UserError("model.positions=rotary needs an even head dimension")
        if self.identity_bias_scope not in IDENTITY_SCOPES:
            allowed = ", ".join(IDENTITY_SCOPES)
            raise UserError(f"model.identity_bias_scope={self.identity_bias_scope!r}: allowed are {allowed}")
        if self.embed_scale <= 0:
            raise UserError(f"model.embed_scale={self.embed_scale} must be > 0")
        if self.match_init < 0:
            raise UserError(f"model.match_init={self.match_init} must be >= 0 (0: off)")
        if self.identity_bias_fade:
            fade = self.identity_bias_fade
            if len(fade) != 2 or not 0 <= fade[0] < fade[1]:
                raise UserError(f"model.identity_bias_fade={fade} must be [start, end] with 0 <= start < end")
            if self.identity_bias is None:
                raise UserError("model.identity_bias_fade needs the term on (model.identity_bias)")

    def same_symbol_weight_at(self, step: int) -> float:
        """The weight of the same-symbol term at a training step (1 without a fade)."""
        if not self.identity_bias_fade:
            return 1.0
        start, end = self.identity_bias_fade
        return min(1.0, max(0.0, (end - step) / (end - start)))

    @property
    def embed_std(self) -> float:
        return self.embed_init_std or 1.0 / math.sqrt(self.d_model)


@dataclass
class ModelOutput:
    logits: Tensor  # (B, T, V)
    hidden: list[list[Tensor]] | None = None  # hidden[iteration][layer]: (B, T, D), after that layer
    embedded: Tensor | None = None  # the input to the first layer
    iterations: Tensor | None = None  # (B,) iterations each example used, when halting


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        d_mlp = cfg.d_mlp or 4 * cfg.d_model
        self.up = Linear(cfg.d_model, d_mlp, bias=cfg.bias)
        self.out = Linear(d_mlp, cfg.d_model, bias=cfg.bias)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.drop(self.out(F.gelu(self.up(x))))


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig, index: int) -> None:
        super().__init__()
        self.index, self.copy_values = index, cfg.copy_values
        self.ln1 = LayerNorm(cfg.d_model, eps=cfg.ln_eps)
        self.attn = SelfAttention(cfg.d_model, cfg.n_heads, cfg.bias, cfg.dropout, cfg.identity_bias)
        self.copy = (
            CopyAttention(cfg.d_model, cfg.copy_head_dim, cfg.copy_gate_init)
            if index in cfg.copy_layers
            else None
        )
        self.ln2 = LayerNorm(cfg.d_model, eps=cfg.ln_eps)
        self.mlp = MLP(cfg)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(
        self,
        x: Tensor,
        token_embeddings: Tensor,
        mask: Tensor | None,
        rotary: dict[int, tuple[Tensor, Tensor]] | None,
        cache: KVCache | None,
        iteration: int,
        same_symbol: Tensor | None = None,
    ) -> Tensor:
        a = self.ln1(x)
        head_rot = rotary and rotary[self.attn.head_dim]
        key = (iteration, self.index, "attn")
        update = self.drop(self.attn(a, mask, head_rot, cache, key, same_symbol))
        if self.copy is not None:
            values = token_embeddings if self.copy_values == "embedding" else a
            copy_rot = rotary and rotary[self.copy.head_dim]
            update = update + self.copy(a, values, mask, copy_rot, cache, (iteration, self.index, "copy"))
        x = x + update
        return x + self.mlp(self.ln2(x))


class Transformer(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        cfg.validate()
        if cfg.vocab_size <= 0 or cfg.max_seq_len <= 0:
            raise UserError("model.vocab_size and model.max_seq_len must be set (or taken from the task)")
        self.cfg = cfg
        self.embed = Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_embed = Embedding(cfg.max_seq_len, cfg.d_model) if cfg.positions == "learned" else None
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg, i) for i in range(cfg.n_layers))
        self.ln_f = LayerNorm(cfg.d_model, eps=cfg.ln_eps)
        self.unembed = None if cfg.tied else Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self._rotary_cache: dict[tuple[int, int, str], dict[int, tuple[Tensor, Tensor]]] = {}
        # tokens whose rows the same-symbol term reads; the others score 0 with every token
        every_token = torch.ones(cfg.vocab_size, dtype=torch.bool)
        self.register_buffer("same_symbol_tokens", every_token, persistent=False)
        if cfg.identity_bias_fade:  # saved with the weights: read after the fade, the model runs without it
            self.register_buffer("same_symbol_weight", torch.ones(()))
        self.reset_parameters()

    def restrict_same_symbol(self, token_ids: list[int]) -> None:
        """Let the same-symbol term read only the rows of `token_ids` (model.identity_bias_scope=symbols):
        repeated syntax tokens then draw no attention to each other through it."""
        self.same_symbol_tokens.zero_()
        self.same_symbol_tokens[torch.as_tensor(token_ids, dtype=torch.long)] = True

    # ---------------------------------------------------------------- parameters
    def reset_parameters(self) -> None:
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                nn.init.normal_(p, std=self.cfg.init_std)
            elif name.endswith("bias"):
                nn.init.zeros_(p)
        for m in self.modules():
            if isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
        for block in self.blocks:
            if self.cfg.zero_init:
                for proj in (block.attn.out, block.mlp.out):
                    nn.init.zeros_(proj.weight)
            if block.copy is not None:
                nn.init.constant_(block.copy.gate, self.cfg.copy_gate_init)
            if block.attn.same_symbol is not None:
                nn.init.constant_(block.attn.same_symbol, self.cfg.identity_bias)
            if self.cfg.match_init > 0:
                self._plant_match(block.attn.qkv.weight)
        self.init_rows_(self.embed.weight)
        if self.unembed is not None:
            self.init_rows_(self.unembed.weight)

    @torch.no_grad()
    def _plant_match(self, qkv: Tensor) -> None:
        """Keys = queries: q_i·k_j/√d_head is then |W x|²/√d_head for two positions holding the same
        (LayerNormed) content x, about `match_init`, and about 0 ± match_init/√d_head otherwise."""
        d, head_dim = self.cfg.d_model, self.cfg.d_model // self.cfg.n_heads
        std = math.sqrt(self.cfg.match_init / (math.sqrt(head_dim) * d))
        nn.init.normal_(qkv[:d], std=std)
        qkv[d : 2 * d] = qkv[:d]

    @torch.no_grad()
    def init_rows_(
        self, weight: Tensor, rows: Tensor | None = None, generator: torch.Generator | None = None
    ) -> None:
        """Draw (un)embedding rows from their initial distribution (all rows, or only `rows`)."""
        shape = weight.shape if rows is None else (len(rows), weight.shape[1])
        fresh = torch.randn(shape, generator=generator, device=weight.device) * self.cfg.embed_std
        if rows is None:
            weight.copy_(fresh.to(weight.dtype))
        else:
            weight[rows] = fresh.to(weight.dtype)

    @property
    def n_seeds(self) -> int:
        """The seeds a stacked model holds (`symgen.models.stacking`); 1 for an ordinary model."""
        return seeds_of(self.embed.weight, base_dim=2)

    @property
    def unembedding(self) -> Tensor:
        return self.embed.weight if self.unembed is None else self.unembed.weight

    def param_groups(self) -> dict[str, list[nn.Parameter]]:
        """Parameters by role, for per-group weight decay: embed, unembed, norm (LayerNorm, biases,
        gates, same-symbol β) and rest."""
        groups: dict[str, list[nn.Parameter]] = {"embed": [], "unembed": [], "norm": [], "rest": []}
        for name, p in self.named_parameters():
            if name == "embed.weight":
                groups["embed"].append(p)
            elif name == "unembed.weight":
                groups["unembed"].append(p)
            elif p.dim() < 2:
                groups["norm"].append(p)
            else:
                groups["rest"].append(p)
        return groups

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    # ---------------------------------------------------------------- forward
    def forward(
        self,
        ids: Tensor,
        attention_mask: Tensor | None = None,
        n_loops: int | Sequence[int] | None = None,
        *,
        cache: KVCache | None = None,
        halting: HaltingRule | None = None,
        answer_positions: Tensor | None = None,
        select: Tensor | None = None,
        return_hidden: bool = False,
    ) -> ModelOutput:
        """ids (B, T). attention_mask (B, past + T), True at real tokens, or None when there is no
        padding; past is the number of positions `cache` already holds (incremental decoding: the
        tokens continue the cached ones), 0 without a cache.

        n_loops overrides the number of iterations (inference-time scaling). A stacked model may
        take one count per seed (seeds drawing different R): a row past its seed's count keeps its
        residual stream, as if the loop had ended there.

        With `halting`, each example stops iterating once the rule fires on its distribution at
        `answer_positions` (B,) (default: its last real token, so right-padded batches are read at
        the answer, not at a pad column); its residual stream is then frozen.

        `select` (B, T) bool reads out only those positions (final norm and unembedding, the costly
        end of a small model's step): logits are then (N, V), row-major, as `logits_full[select]`.

        `return_hidden` keeps the residual stream after every layer of every iteration."""
        B, T = ids.shape
        past = 0 if cache is None else cache.length
        n_loops, iterations = self._loop_counts(n_loops, B, ids.device)
        positions = self._positions(B, T, attention_mask, past, ids.device)
        if self.pos_embed is not None:  # rotary and no positions need no check (and no host sync)
            longest = past + T if attention_mask is None else int(positions.max()) + 1
            if longest > self.cfg.max_seq_len:
                raise UserError(f"sequence of {longest} tokens exceeds model.max_seq_len")
        if self.cfg.causal:
            mask = self._mask(attention_mask, T, past)
        else:
            mask = self._prompt_mask(ids, attention_mask, cache)
        rotary = self._rotary(positions, past if attention_mask is None else None)

        token_embeddings = self.embed(ids)
        if self.cfg.embed_scale != 1.0:
            token_embeddings = token_embeddings * self.cfg.embed_scale
        same = self._same_symbol(ids, token_embeddings, cache)
        if self.pos_embed is not None and self.n_seeds > 1:
            positions = positions.expand(B, T)  # each seed's rows read its own position table
        x = token_embeddings if self.pos_embed is None else token_embeddings + self.pos_embed(positions)
        embedded = self.drop(x)

        def blocks(x: Tensor, r: int) -> list[Tensor]:
            """Iteration r of the block stack: the residual stream after each block."""
            layers = []
            for block in self.blocks:
                x = block(x, token_embeddings, mask, rotary, cache, r, same)
                layers.append(x)
            return layers

        if halting is not None and answer_positions is None:
            answer_positions = self._last_real(B, T, attention_mask, past, ids.device)
        x, hidden, used = self._iterate(
            embedded, blocks, n_loops, iterations, halting, answer_positions, return_hidden
        )
        if select is None:
            logits = self.readout(x)
        elif self.n_seeds == 1:
            logits = self.readout(x[select])
        else:  # seed by seed: each selects its own number of positions
            logits = readout_selected(x, select, self.ln_f, self.unembedding)
        return ModelOutput(logits, hidden if return_hidden else None, embedded, used)

    def _iterate(
        self,
        embedded: Tensor,
        blocks: Callable[[Tensor, int], list[Tensor]],
        n_loops: int,
        iterations: Tensor | None,
        halting: HaltingRule | None,
        answer_positions: Tensor | None,
        return_hidden: bool,
    ) -> tuple[Tensor, list[list[Tensor]], Tensor | None]:
        """The block stack applied n_loops times with shared weights, from the embedded input: the
        last residual stream, every layer of every iteration (with `return_hidden`) and, with
        `halting`, the iterations each row used. A row past its count in `iterations` (B,), or
        halted, keeps its stream."""
        B = embedded.shape[0]
        x, hidden, history = embedded, [], []
        rows = torch.arange(B, device=x.device)
        halted = torch.zeros(B, dtype=torch.bool, device=x.device)
        used = torch.full((B,), n_loops, device=x.device)
        for r in range(n_loops):
            previous = x
            if r > 0 and self.cfg.input_injection:
                x = x + embedded
            layers = blocks(x, r)
            x = layers[-1]
            if iterations is not None:
                x = torch.where((r < iterations)[:, None, None], x, previous)
            if return_hidden:
                hidden.append(layers)
            if halting is not None:
                x = torch.where(halted[:, None, None], previous, x)
                history.append(F.log_softmax(self.readout(x[rows, answer_positions]).float(), -1))
                stop = halting.stop_mask(torch.stack(history))[-1] & ~halted
                used = torch.where(stop, r + 1, used)
                halted = halted | stop
        return x, hidden, used if halting is not None else None

    def readout(self, h: Tensor) -> Tensor:
        """Final LayerNorm and unembedding: logits from any residual-stream state."""
        return linear(self.ln_f(h), self.unembedding)

    # ---------------------------------------------------------------- loop counts, masks, positions
    def _loop_counts(
        self, n_loops: int | Sequence[int] | None, B: int, device: torch.device
    ) -> tuple[int, Tensor | None]:
        """The number of iterations to run, and each row's own count when the seeds of a stacked
        model run different ones (None: every row runs them all)."""
        if not isinstance(n_loops, (list, tuple)):
            return n_loops or self.cfg.n_loops, None
        if len(n_loops) != self.n_seeds:
            raise ValueError(f"{len(n_loops)} iteration counts for a model of {self.n_seeds} seeds")
        if len(set(n_loops)) == 1:
            return n_loops[0], None
        return max(n_loops), torch.tensor(n_loops, device=device).repeat_interleave(B // len(n_loops))

    def _same_symbol(self, ids: Tensor, token_embeddings: Tensor, cache: KVCache | None) -> Tensor | None:
        """cos(e_i, e_j) of the raw embedding rows for the same-symbol term (None when it is off)."""
        if self.cfg.identity_bias is None:
            return None
        symbol_rows = token_embeddings.detach() if self.cfg.identity_bias_detach else token_embeddings
        if self.cfg.identity_bias_scope != "all":
            symbol_rows = symbol_rows * self.same_symbol_tokens[ids].unsqueeze(-1)
        scores = same_symbol_scores(symbol_rows, cache)
        return scores * self.same_symbol_weight if self.cfg.identity_bias_fade else scores

    def _last_real(self, B: int, T: int, attention_mask: Tensor | None, past: int, device) -> Tensor:
        """(B,) the last real column of each row (the last column when there is no padding)."""
        if attention_mask is None:
            return torch.full((B,), T - 1, device=device)
        real = attention_mask[:, past:].long() * torch.arange(1, T + 1, device=device)
        return real.argmax(-1)

    def _positions(self, B: int, T: int, attention_mask: Tensor | None, past: int, device) -> Tensor:
        if attention_mask is None:  # (1, T): broadcast over the batch
            return torch.arange(past, past + T, device=device)[None]
        # left padding: count real tokens, so every sequence starts at position 0
        return (attention_mask.long().cumsum(-1) - 1).clamp(min=0)[:, past : past + T]

    def _mask(self, attention_mask: Tensor | None, T: int, past: int) -> Tensor | None:
        if attention_mask is None:
            return None
        Tk = past + T
        q_pos = torch.arange(past, Tk, device=attention_mask.device)[:, None]
        k_pos = torch.arange(Tk, device=attention_mask.device)[None, :]
        allowed = (k_pos <= q_pos)[None] & attention_mask[:, None, :].bool()
        allowed = allowed | (k_pos == q_pos)[None]  # a padding query attends to itself, never to nothing
        return allowed[:, None]

    def _prompt_mask(self, ids: Tensor, attention_mask: Tensor | None, cache: KVCache | None) -> Tensor:
        """Bidirectional: every query may attend to every real key (and to itself, so a padding
        query never attends to nothing). Real keys: `attention_mask`, or the ids other than pad_id."""
        if cache is not None:
            raise UserError("a model with model.causal=false reads whole prompts: it has no cached decoding")
        real = attention_mask.bool() if attention_mask is not None else ids != self.cfg.pad_id
        T = ids.shape[1]
        itself = torch.eye(T, dtype=torch.bool, device=ids.device)
        return (real[:, None, :] | itself[None])[:, None]

    def _rotary(self, positions: Tensor, past: int | None = None) -> dict[int, tuple[Tensor, Tensor]] | None:
        """cos/sin tables per head dimension. Unpadded batches (`past` given: positions past..past+T-1)
        reuse the tables of their first call."""
        if self.cfg.positions != "rotary":
            return None
        key = None if past is None else (past, positions.shape[-1], str(positions.device))
        if key in self._rotary_cache:
            return self._rotary_cache[key]
        dims = {self.cfg.d_model // self.cfg.n_heads, self.cfg.copy_head_dim}
        tables = {d: rotary_tables(positions, d, self.cfg.rotary_fraction) for d in dims}
        if key is not None and len(self._rotary_cache) < 4096:
            self._rotary_cache[key] = tables
        return tables
