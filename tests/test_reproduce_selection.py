"""`reproduce --runs` (train and analyse only some runs) and `--set` (an override for every run)."""

import json
from pathlib import Path

import pytest
import yaml
from conftest import symgen

from symgen.errors import UserError
from symgen.experiments.registry import select
from symgen.experiments.suite import Selection, analyze_experiment, list_plan
from symgen.experiments.types import Experiment, Section


def test_set_reaches_every_run_after_its_own_overrides():
    (unseen,) = select("paper", "unseen")
    runs = unseen.runs("paper")
    changed = Selection(sets=("train.steps=40", "model.d_model=32")).apply(runs)
    assert [r.name for r in changed] == [r.name for r in runs]
    for before, after in zip(runs, changed, strict=True):
        steps = [o for o in after.overrides if o.startswith("train.steps=")]
        assert steps == ["train.steps=40"] and "model.d_model=32" in after.overrides  # paper's 30000, 768
        assert len(after.overrides) == len(before.overrides)  # replaced, not added twice
    listed = list_plan("paper", "unseen", Selection(runs=("unseen-copy",), sets=("train.steps=40",)))
    assert listed.splitlines()[1:] == [listed.splitlines()[1]] and "train.steps=40" in listed
    assert Selection(sets=("train.steps=40",)).header() == {"set": ["train.steps=40"]}
    assert Selection().header() == {}


def test_runs_and_set_are_checked_before_anything_trains():
    chosen = select("smoke", "transfer,unseen")
    with pytest.raises(UserError, match="unseen-nope"):
        Selection(runs=("unseen-nope",)).check("smoke", chosen)
    with pytest.raises(UserError, match="KEY=VALUE"):
        Selection(sets=("train.steps",)).check("smoke", chosen)
    with pytest.raises(UserError, match="transfer-pretrain"):  # a fine-tune needs its pretrained run
        Selection(runs=("transfer-ft-reserved",)).check("smoke", chosen)
    Selection(runs=("transfer-pretrain", "transfer-ft-reserved")).check("smoke", chosen)


def test_reproduce_trains_only_the_runs_named_and_records_the_overrides(tmp_path: Path):
    out = tmp_path / "repro"
    runs = "unseen-standard,unseen-copy-frozen"
    args = ["reproduce", "--suite", "smoke", "--only", "unseen,reverse", "--runs", runs]
    args += ["--set", "train.steps=6", "--set", "train.eval_every=3", "--out", str(out), "--no-progress"]
    result = symgen(*args)
    assert result.returncode == 0, result.stderr[-2000:]
    assert sorted(p.name for p in (out / "runs").iterdir() if p.is_dir()) == sorted(runs.split(","))
    for name in runs.split(","):
        config = yaml.safe_load((out / "runs" / name / "config.yaml").read_text())
        assert config["train"]["steps"] == 6 and config["train"]["eval_every"] == 3
    data = json.loads((out / "claims.json").read_text())
    assert data["set"] == ["train.steps=6", "train.eval_every=3"] and data["runs"] == runs.split(",")
    assert data["experiments"] == ["unseen"]  # reverse: none of its runs named
    claims = {c["id"]: c for c in data["claims"]}
    # a part over a run left out is not judged, naming it; the analysis itself ran
    assert claims["A7.3β"]["verdict"] == "not judged" and "same-symbol" in json.dumps(
        claims["A7.3β"]["parts"]
    )
    assert claims["A7.1"]["verdict"] != "not run"
    page = (out / "report.html").read_text()
    assert "changed by --set <code>train.steps=6</code>" in page and "Only the runs named by --runs" in page


class NeedsEveryRun(Experiment):
    name, title = "needs-every-run", "An analysis that reads every run it lists"

    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        raise FileNotFoundError("runs/left-out/summary.json")


def test_an_analysis_that_needs_a_run_left_out_reports_so(tmp_path: Path):
    section, claims = analyze_experiment(NeedsEveryRun(), "smoke", [], tmp_path, left_out=("left-out",))
    assert claims == {} and "--runs left out (left-out" in section.paragraphs[0]
    with pytest.raises(FileNotFoundError):  # with every run trained, a failing analysis is a bug
        analyze_experiment(NeedsEveryRun(), "smoke", [], tmp_path)


def test_b52_without_a_looped_run_still_shows_the_vanilla_models_lens(tmp_path: Path):
    out = tmp_path / "vanilla"
    args = ["reproduce", "--suite", "smoke", "--only", "kg-inside", "--runs", "kg-sys-vanilla,kg-sys-deep"]
    done = symgen(*args, "--out", str(out), "--no-progress", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    claims = json.loads((out / "claims.json").read_text())["claims"]
    b52 = next(c for c in claims if c["id"] == "B5.2")
    looped_parts = [p for p in b52["parts"] if "vanilla" not in p["text"]]
    assert looped_parts and all(p["outcome"] == "not judged" for p in looped_parts)
    # the depth runs were left out: the parts over them name them, not "none in this output"
    b55 = next(c for c in claims if c["id"] == "B5.5")
    assert all(
        "runs of its group that --runs left out of this analysis: " in p["measured"]["0"]
        for p in b55["parts"]
    )
    assert "kg-depth-r8" in b55["parts"][0]["measured"]["0"]
    page = (out / "report.html").read_text()
    lens = page[page.index("Logit lens: best top-1") :]
    lens = lens[: lens.index("</table>")]
    assert "kg-sys-deep" in lens and "kg-sys-vanilla" in lens  # the vanilla models' rows, no looped one
