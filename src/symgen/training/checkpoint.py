"""Checkpoints: tensors in safetensors, everything else in JSON, each written atomically.

A checkpoint is `step_NNNNNNN.safetensors` (model, optimizer tensors, RNG state) plus
`step_NNNNNNN.json` (step, optimizer scalars and groups, hook and trainer state). The JSON is
written last, so a checkpoint whose JSON exists is complete unless a file was damaged afterwards;
damage is reported as a UserError naming both files of the pair, which go together: removing one
alone leaves the other behind. Every file is written with the mode the umask gives (safetensors
alone would write 0600).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from symgen.errors import UserError
from symgen.models.transformer import Transformer

# what a checkpoint's JSON must hold for a run to resume from it
STATE_KEYS = ("step", "elapsed", "window", "last_eval", "optimizer", "hooks")


def _umask() -> int:
    mask = os.umask(0)  # read once, at import, before any thread could create a file meanwhile
    os.umask(mask)
    return mask


FILE_MODE = 0o666 & ~_umask()  # what open() gives a new file


def atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_bytes(path, (json.dumps(obj, indent=1) + "\n").encode())


def atomic_save_tensors(
    path: Path, tensors: dict[str, torch.Tensor], metadata: dict[str, str] | None = None
) -> None:
    tmp = path.with_name(path.name + ".tmp")
    save_file({k: v.detach().contiguous().cpu() for k, v in tensors.items()}, tmp, metadata=metadata)
    os.chmod(tmp, FILE_MODE)
    os.replace(tmp, path)


def load_tensors(path: Path, advice: str = "") -> dict[str, torch.Tensor]:
    """The tensors of a safetensors file; a damaged one is a UserError naming it (and `advice`)."""
    try:
        return load_file(path)
    except (SafetensorError, OSError, ValueError) as e:
        raise UserError(
            f"checkpoint {path} is truncated or corrupt ({e})" + (f"; {advice}" if advice else "")
        ) from None


def delete_advice(directory: Path, step: int) -> str:
    """What to do about a damaged checkpoint: delete both files of its pair, then resume again."""
    tensor_path, json_path = checkpoint_paths(directory, step)
    return (
        f"delete both files of the step-{step} checkpoint, {tensor_path.name} and {json_path.name}, to "
        "resume from the checkpoint before it (from step 0 when none is left)"
    )


def optimizer_to_flat(state: dict[str, Any]) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Split an optimizer state_dict into tensors and JSON-able rest."""
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, dict[str, Any]] = {}
    for idx, entry in state["state"].items():
        for name, value in entry.items():
            if isinstance(value, torch.Tensor):
                tensors[f"optim.{idx}.{name}"] = value
            else:
                scalars.setdefault(str(idx), {})[name] = value
    return tensors, {"param_groups": state["param_groups"], "scalars": scalars}


def optimizer_from_flat(tensors: dict[str, torch.Tensor], rest: dict[str, Any]) -> dict[str, Any]:
    state: dict[int, dict[str, Any]] = {}
    for key, value in tensors.items():
        if key.startswith("optim."):
            _, idx, name = key.split(".", 2)
            state.setdefault(int(idx), {})[name] = value
    for idx, entry in rest["scalars"].items():
        state.setdefault(int(idx), {}).update(entry)
    return {"state": state, "param_groups": rest["param_groups"]}


def checkpoint_paths(directory: Path, step: int) -> tuple[Path, Path]:
    stem = directory / f"step_{step:07d}"
    return stem.with_suffix(".safetensors"), stem.with_suffix(".json")


def list_checkpoints(directory: Path) -> list[int]:
    """Steps of the checkpoints in `directory` whose JSON (written last) exists, oldest first."""
    if not directory.is_dir():
        return []
    steps = []
    for p in directory.glob("step_*.json"):
        try:
            steps.append(int(p.stem.split("_")[1]))
        except ValueError:
            continue
    return sorted(steps)


def save_checkpoint(
    directory: Path, step: int, tensors: dict[str, torch.Tensor], state: dict[str, Any], keep: int
) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    tensor_path, json_path = checkpoint_paths(directory, step)
    atomic_save_tensors(tensor_path, tensors)
    atomic_write_json(json_path, state)
    if keep > 0:
        for old in list_checkpoints(directory)[:-keep]:
            for path in checkpoint_paths(directory, old):
                path.unlink(missing_ok=True)


def load_checkpoint(directory: Path, step: int) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    tensor_path, json_path = checkpoint_paths(directory, step)
    damaged, advice = f"checkpoint {json_path} is truncated or corrupt", delete_advice(directory, step)
    try:
        state = json.loads(json_path.read_text())
    except (ValueError, OSError) as e:  # ValueError: bad JSON or bytes that are not text
        raise UserError(f"{damaged} ({type(e).__name__}); {advice}") from None
    missing = [k for k in STATE_KEYS if not isinstance(state, dict) or k not in state]
    if missing:
        raise UserError(f"{damaged} (no {', '.join(missing)}); {advice}")
    return load_tensors(tensor_path, advice), state


def load_weights(model: Transformer, run_dir: Path, weights: str = "final") -> Transformer:
    """Load a run's final weights, or those of the checkpoint at step `weights`, into `model`."""
    path = Path(run_dir) / "final.safetensors"
    if weights != "final":
        path = checkpoint_paths(Path(run_dir) / "checkpoints", int(weights))[0]
    if not path.exists():
        raise UserError(f"{path} does not exist: the run has not finished or kept that checkpoint")
    tensors = load_tensors(path)
    model.load_state_dict({k.removeprefix("model."): v for k, v in tensors.items() if k.startswith("model.")})
    return model.eval()
