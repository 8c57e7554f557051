"""runs.yaml: an `include` takes another folder's runs for the same suite, all of them or those named."""

from pathlib import Path

import pytest
import yaml

from symgen.errors import UserError
from symgen.experiments import plan


def write_plan(folder: Path, data: dict) -> Path:
    folder.mkdir(parents=True)
    (folder / plan.PLAN).write_text(yaml.safe_dump(data))
    return folder


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return write_plan(
        tmp_path / "source",
        {
            "sets": {"small": ["train.steps=10"]},
            "suites": {
                "quick": [
                    {"run": "one", "recipe": "reverse", "with": ["small"]},
                    {"run": "two", "recipe": "reverse", "set": ["model.d_model=32"]},
                    {"run": "three", "recipe": "reverse"},
                    {"run": "three-long", "recipe": "reverse", "extends": "three", "set": ["train.steps=20"]},
                ]
            },
        },
    )


def names(folder: Path, suite: str = "quick") -> list[str]:
    return [r["name"] for r in plan.runs(folder, suite)]


def test_an_include_with_runs_takes_only_those_in_the_order_named_as_their_folder_lists_them(
    source: Path, tmp_path: Path
):
    everything = write_plan(tmp_path / "all", {"suites": {"quick": [{"include": "source"}]}})
    assert names(everything) == ["one", "two", "three", "three-long"]
    some = write_plan(
        tmp_path / "some",
        {
            "suites": {
                "quick": [
                    {"run": "own", "recipe": "reverse"},
                    {"include": "source", "runs": ["three", "one"]},
                ]
            }
        },
    )
    assert names(some) == ["own", "three", "one"]
    by_name = {r["name"]: r for r in plan.runs(some, "quick")}
    # the included run keeps the sets of the folder that lists it (this folder has no `small`)
    assert by_name["one"] == {r["name"]: r for r in plan.runs(source, "quick")}["one"]
    assert by_name["one"]["overrides"] == ["train.steps=10"]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"include": "source", "runs": ["one", "four"]},
            "names runs its quick suite lacks: four \\(it has one, two, three, three-long\\)",
        ),
        ({"include": "source", "run": "one"}, "unknown keys \\['run'\\]"),
        ({"include": "source", "runs": "one"}, "runs must be a non-empty list"),
        ({"include": "source", "runs": []}, "runs must be a non-empty list"),
        ({"include": "source", "runs": ["one", "one"]}, "names a run twice"),
        (
            {"include": "source", "runs": ["three-long"]},
            "names run three-long, which starts from three; name it",
        ),
    ],
)
def test_an_include_naming_an_unknown_run_or_key_is_refused(
    source: Path, tmp_path: Path, entry: dict, message: str
):
    folder = write_plan(tmp_path / "bad", {"suites": {"quick": [entry]}})
    with pytest.raises(UserError, match=message):
        plan.runs(folder, "quick")
