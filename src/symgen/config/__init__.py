"""Typed configs: dataclasses with defaults, YAML recipes, `key=value` overrides with dotted paths.

Everything a user can get wrong is refused here with one line that names the key and what is
allowed (a `UserError`), before any work starts.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from symgen.config.train import TrainConfig
from symgen.errors import UserError
from symgen.models.transformer import ModelConfig
from symgen.tasks.registry import TASK_CONFIGS

RECIPE_DIR = Path(__file__).parent / "recipes"


@dataclass
class ExperimentConfig:
    name: str = "experiment"
    description: str = ""
    seed: int = 0
    device: str = "auto"  # auto | cpu | cuda | cuda:N
    task: Any = None  # the dataclass registered for task.name
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)

    def validate(self) -> None:
        if self.task is None:
            raise UserError("the recipe names no task: add `task: {name: ...}`")
        for part in (self.task, self.model, self.train):
            part.validate()
        blocks = self.train.match_loss_blocks
        if self.train.match_loss > 0 and (not blocks or max(blocks) >= self.model.n_layers):
            last = self.model.n_layers - 1
            raise UserError(f"train.match_loss_blocks={blocks}: give one or more of the blocks 0..{last}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# ------------------------------------------------------------------ building from plain data
def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp).replace("typing.", ""))


def _coerce(value: Any, tp: Any, key: str) -> Any:
    """Check `value` against the annotation `tp`; convert only where it is lossless."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(tp)
        if value is None and type(None) in options:
            return None
        for option in options:
            if option is type(None):
                continue
            try:
                return _coerce(value, option, key)
            except UserError:
                pass
        raise UserError(f"{key}: {value!r} is not one of {' | '.join(_type_name(o) for o in options)}")
    if origin in (list, tuple):
        if not isinstance(value, list | tuple):
            raise UserError(f"{key}: expected a list, got {value!r}")
        (inner, *_) = typing.get_args(tp) or (Any,)
        items = [_coerce(v, inner, f"{key}[{i}]") for i, v in enumerate(value)]
        return items if origin is list else tuple(items)
    if origin is dict or tp is Any:
        return value
    if tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif tp is str:
        if isinstance(value, str):
            return value
    elif dataclasses.is_dataclass(tp):
        if isinstance(value, dict):
            return build(tp, value, key)
    raise UserError(f"{key}: expected {_type_name(tp)}, got {value!r}")


def build(cls: type, data: dict[str, Any], prefix: str = "") -> Any:
    """Build dataclass `cls` from a plain dict, refusing unknown keys and wrong types."""
    if not isinstance(data, dict):
        raise UserError(f"{prefix or 'config'}: expected a mapping, got {data!r}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        where = f"{prefix}." if prefix else ""
        raise UserError(f"unknown key {where}{unknown[0]}; allowed: {', '.join(sorted(names))}")
    kwargs = {}
    for name, value in data.items():
        key = f"{prefix}.{name}" if prefix else name
        kwargs[name] = _coerce(value, hints[name], key)
    return cls(**kwargs)


def build_experiment(data: dict[str, Any]) -> ExperimentConfig:
    data = dict(data)
    task = data.pop("task", None)
    if not isinstance(task, dict) or "name" not in task:
        raise UserError(
            "the recipe needs `task:` with a `name:` (one of: " + ", ".join(sorted(TASK_CONFIGS)) + ")"
        )
    if task["name"] not in TASK_CONFIGS:
        raise UserError(
            f"task.name: unknown task {task['name']!r}; allowed: {', '.join(sorted(TASK_CONFIGS))}"
        )
    cfg = build(ExperimentConfig, data)
    cfg.task = build(TASK_CONFIGS[task["name"]], task, "task")
    cfg.validate()
    return cfg


# ------------------------------------------------------------------ recipes and overrides
def recipe_names() -> list[str]:
    return sorted(p.stem for p in RECIPE_DIR.glob("*.yaml"))


def load_recipe(recipe: str | Path) -> dict[str, Any]:
    """A YAML path, or the name of a built-in recipe, with its `base:` chain merged in."""
    return _load_with_base(_recipe_path(recipe), ())


def _recipe_path(recipe: str | Path, referrer: Path | None = None) -> Path:
    """A name without suffix is a recipe beside `referrer` (the recipe naming it as its base) or
    a built-in one; anything else is a YAML path, relative to the referrer's folder.
    A base named like its own file is the built-in, so a copy can extend the original."""
    path = Path(recipe)
    if referrer is not None and not path.is_absolute():
        path = referrer.parent / path
    if not path.suffix and not path.exists():
        sibling = path.with_suffix(".yaml")
        beside = referrer is not None and sibling.exists() and not sibling.samefile(referrer)
        path = sibling if beside else RECIPE_DIR / f"{recipe}.yaml"
        if not path.exists():
            builtins = ", ".join(recipe_names())
            raise UserError(f"no recipe {str(recipe)!r}: give a YAML file or one of: {builtins}")
    if not path.is_file():
        raise UserError(f"recipe file {path} does not exist")
    return path


def _load_with_base(path: Path, chain: tuple[Path, ...]) -> dict[str, Any]:
    if path.resolve() in chain:
        names = " -> ".join(p.stem for p in (*chain, path.resolve()))
        raise UserError(f"recipe {path}: its base chain loops ({names})")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise UserError(f"recipe {path} is not valid YAML: {yaml_error(e)}") from None
    if not isinstance(data, dict):
        raise UserError(f"recipe {path} must be a YAML mapping")
    base = data.pop("base", None)
    if base is None:
        return data
    if not isinstance(base, str):
        raise UserError(f"recipe {path}: base must be a recipe name or a YAML path, got {base!r}")
    try:
        base_path = _recipe_path(base, path)
    except UserError as e:  # say which recipe names the missing base: it may sit deep in a chain
        raise UserError(f"recipe {path}: base: {e}") from None
    inherited = _load_with_base(base_path, (*chain, path.resolve()))
    return _merge(inherited, data)


def yaml_error(e: yaml.YAMLError) -> str:
    """A YAML syntax error in one line: what is wrong, at which line and column of the file."""
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    context = getattr(e, "context", None)
    what = f"{problem} ({context})" if context else problem
    return f"{what} at line {mark.line + 1}, column {mark.column + 1}" if mark else what


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Sections merge key by key; any other value (lists included) in `over` replaces the base's."""
    merged = _deep_copy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = _deep_copy(value)
    return merged


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply `a.b.c=value` overrides (value parsed as YAML) to a nested dict."""
    data = _deep_copy(data)
    for item in overrides:
        if "=" not in item:
            raise UserError(f"override {item!r} must look like key=value (e.g. train.steps=300)")
        key, raw = item.split("=", 1)
        try:
            value = yaml.safe_load(raw) if raw else ""
        except yaml.YAMLError:
            value = raw
        node = data
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise UserError(f"override {key}: {part} is not a section")
        node[parts[-1]] = value
    return data


def _deep_copy(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _deep_copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_deep_copy(v) for v in data]
    return data


def resolve(recipe: str | Path | dict[str, Any], overrides: list[str] | None = None) -> ExperimentConfig:
    data = recipe if isinstance(recipe, dict) else load_recipe(recipe)
    return build_experiment(apply_overrides(data, overrides or []))


def dump(cfg: ExperimentConfig) -> str:
    return yaml.safe_dump(cfg.to_dict(), sort_keys=False)
