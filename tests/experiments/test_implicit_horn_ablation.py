"""The implicit-Horn ablation: the two runs that each undo one of the recipes' changes beyond SPEC C.1
leave the claim experiment, and their own experiment tables them beside the fixed-R looped model."""

import json
from pathlib import Path

import yaml

from symgen.experiments.implicit_horn.claims import DYNAMIC_RUN, LOOPED_RUN
from symgen.experiments.implicit_horn.experiment import ImplicitHornExperiment
from symgen.experiments.implicit_horn_ablation.experiment import (
    ANSWER_ONLY_RUN,
    CAUSAL_RUN,
    ImplicitHornAblationExperiment,
)
from symgen.experiments.registry import experiments, select

CHANGE = {CAUSAL_RUN: "model.causal=true", ANSWER_ONLY_RUN: "task.head_labels=false"}


def test_the_ablation_runs_leave_the_claim_experiment_and_undo_one_change_each():
    for suite in ("smoke", "quick"):
        claims = {r.name: r for r in ImplicitHornExperiment().runs(suite)}
        ablation = {r.name: r for r in ImplicitHornAblationExperiment().runs(suite)}
        assert CAUSAL_RUN not in claims and ANSWER_ONLY_RUN not in claims
        assert set(ablation) == {*CHANGE, LOOPED_RUN}  # the looped run both change, listed with them
        looped = claims[LOOPED_RUN]
        for name, change in CHANGE.items():
            # the looped run's recipe and overrides, with one change (the sets are kept equal)
            assert ablation[name].recipe == looped.recipe
            assert ablation[name].overrides == [*looped.overrides, change], (suite, name)
    assert ImplicitHornAblationExperiment().runs("paper") == []
    assert "implicit-horn-ablation" in [e.name for e in experiments()]
    assert [e.name for e in select("smoke", "implicit-horn-ablation")] == ["implicit-horn-ablation"]
    assert ImplicitHornAblationExperiment.statements == ()  # it judges no claim


def fake_run_dir(root: Path, name: str, accuracy: list[float], steps: int) -> Path:
    """A finished run directory holding what the table reads: config and final all_seen accuracy."""
    run = root / name
    run.mkdir(parents=True)
    config = {
        "seed": 0,
        "task": {"max_depth": 3, "test_max_depth": 6, "eval_loops": [1, 2, 4, 8]},
        "model": {"n_loops": 4},
        "train": {"loops": "fixed"},
    }
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    final = {f"eval/all_seen/depth{d}/accuracy": a for d, a in enumerate(accuracy, 1)}
    summary = {"final": final, "steps": steps, "parameters": 1, "train_seconds": 1.0}
    (run / "summary.json").write_text(json.dumps(summary))
    return run


def test_the_table_reports_each_run_beside_the_fixed_r_looped_model(tmp_path):
    runs = {
        LOOPED_RUN: fake_run_dir(tmp_path, LOOPED_RUN, [1.0, 0.95, 0.9, 0.8, 0.6, 0.5], 800),
        CAUSAL_RUN: fake_run_dir(tmp_path, CAUSAL_RUN, [0.9, 0.7, 0.6, 0.5, 0.5, 0.5], 900),
        ANSWER_ONLY_RUN: fake_run_dir(tmp_path, ANSWER_ONLY_RUN, [0.6, 0.5, 0.5, 0.5, 0.5, 0.5], 1000),
        DYNAMIC_RUN: fake_run_dir(tmp_path, DYNAMIC_RUN, [1.0] * 6, 700),  # included, not tabled
    }
    section = ImplicitHornAblationExperiment().analyze("smoke", runs, tmp_path / "fig")
    assert section.claims == [] and len(section.tables) == 1
    table = section.tables[0]
    rows = {row[0]: dict(zip(table.headers, row, strict=True)) for row in table.rows}
    assert list(rows) == [LOOPED_RUN, CAUSAL_RUN, ANSWER_ONLY_RUN]
    looped, causal, answer_only = rows[LOOPED_RUN], rows[CAUSAL_RUN], rows[ANSWER_ONLY_RUN]
    assert [causal[f"all_seen depth {d}"] for d in (1, 2, 3)] == [0.9, 0.7, 0.6]
    assert looped["all_seen beyond (depths > 3, mean)"] == round((0.8 + 0.6 + 0.5) / 3, 3)
    assert (looped["reached at R"], causal["reached at R"], answer_only["reached at R"]) == (4, 1, 0)
    assert answer_only["steps"] == 1000 and "head labels" in answer_only["what it undoes"]
