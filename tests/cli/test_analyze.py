import json
import shutil
from pathlib import Path

import pytest
import torch
from conftest import plan_overrides, symgen

from symgen.analysis import loop_report
from symgen.config import resolve
from symgen.errors import UserError
from symgen.experiments.kg_depth.experiment import KGDepthExperiment
from symgen.experiments.kg_systematic.experiment import KGSystematicExperiment
from symgen.training.run import train_run

# the experiments' smoke sizes, with checkpoints kept every 20 steps for the lens
DEPTH_SMOKE = [o for o in plan_overrides(KGDepthExperiment(), "smoke", "kg-depth-r1") if "n_loops" not in o]
SYSTEMATIC_SMOKE = plan_overrides(KGSystematicExperiment(), "smoke", "kg-sys-vanilla")
DEPTH = [*DEPTH_SMOKE, "train.steps=40", "train.checkpoint_every=20"]
SYSTEMATIC = [*SYSTEMATIC_SMOKE, "train.steps=40", "train.checkpoint_every=20", "train.keep_checkpoints=0"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    specs = {
        "depth": ("kg-depth-curriculum", DEPTH),
        "systematic": ("kg-systematic-looped", SYSTEMATIC),
        "vanilla": ("kg-systematic-vanilla", SYSTEMATIC),
    }
    for name, (recipe, overrides) in specs.items():
        train_run(resolve(recipe, overrides), root / name, progress=False)
    return {name: root / name for name in specs}


def test_iterations_margins_halting_write_json_and_figures(runs):
    it = loop_report.iterations(runs["depth"], max_iters=6)
    assert set(it["accuracy"]) == {"hop_2", "hop_3", "hop_4"} and all(
        len(a) == 6 for a in it["accuracy"].values()
    )
    assert it["train_loops"] == "4" and it["train_r_read"] == 4 and it["baseline_r"] == 4
    assert set(it["validation"]) == set(it["test"]) == set(it["accuracy"])
    assert it["chosen_r"] == loop_report.choose_r(it["validation"], list(range(1, 7)))
    assert it["depth_chosen_r"] == loop_report.depth_at(it["test"], it["chosen_r"])
    assert it["depth_baseline"] == loop_report.depth_at(it["test"], 4)
    m = loop_report.margin_curves(runs["depth"], max_iters=7)
    assert all(1 <= g["peak_iteration"] <= 7 for g in m["groups"].values())
    h = loop_report.halting(runs["depth"], max_iters=5)
    assert [r["rule"] for r in h["overall"][:2]] == ["KL < 0.001 and H < 3.0", "KL < 0.001"]
    assert len(h["overall"]) == 2 + 5 and h["overall"][-1]["flops_saved"] == 0.0
    for name in ("iterations", "margins", "halting"):
        assert json.loads((runs["depth"] / "analysis" / f"{name}.json").read_text())
        assert (runs["depth"] / "analysis" / f"{name}.png").stat().st_size > 1000


def without_weights(run: Path, to: Path) -> Path:
    """The run as a results book keeps it: its files, no weights, no checkpoints."""
    shutil.copytree(run, to, ignore=shutil.ignore_patterns("*.safetensors", "checkpoints", "*.png"))
    return to


def test_a_run_without_weights_is_read_from_what_each_analysis_wrote(runs, tmp_path: Path):
    computed = {
        "iterations": loop_report.iterations(runs["depth"], max_iters=6),
        "margins": loop_report.margin_curves(runs["depth"], max_iters=7),
        "halting": loop_report.halting(runs["depth"], max_iters=5),
        "halting-eps0.01": loop_report.halting(runs["depth"], kl_eps=0.01, max_iters=5),
    }
    lens = loop_report.lens(runs["systematic"], n=32)
    depth = without_weights(runs["depth"], tmp_path / "depth")
    read = {
        "iterations": loop_report.iterations(depth, max_iters=6),
        "margins": loop_report.margin_curves(depth, max_iters=7),
        "halting": loop_report.halting(depth, max_iters=5),
        "halting-eps0.01": loop_report.halting(depth, kl_eps=0.01, max_iters=5),
    }
    for name, result in read.items():  # the same numbers, the figure drawn anew beside the JSON
        assert {k: v for k, v in result.items() if k != "figure"} == json.loads(
            json.dumps({k: v for k, v in computed[name].items() if k != "figure"})
        ), name
        assert Path(result["figure"]).parent == depth / "analysis" and Path(result["figure"]).exists()
    assert read["halting"]["kl_eps"] == 0.001 and read["halting-eps0.01"]["kl_eps"] == 0.01
    systematic = without_weights(runs["systematic"], tmp_path / "systematic")
    assert loop_report.lens(systematic, n=32)["checkpoints"] == json.loads(json.dumps(lens["checkpoints"]))
    # other settings than the recorded ones need the weights, and the refusal says which were recorded
    with pytest.raises(UserError, match="was written with max_iters=6; other settings need"):
        loop_report.iterations(depth, max_iters=9)
    with pytest.raises(UserError, match="was written with n=32"):
        loop_report.lens(systematic, n=16)
    # a record of other weights (the run went on since) is not read: the run has no weights to read
    summary = json.loads((depth / "summary.json").read_text())
    (depth / "summary.json").write_text(json.dumps(summary | {"steps": summary["steps"] + 1}))
    with pytest.raises(UserError, match="final"):
        loop_report.margin_curves(depth, max_iters=7)


def fake_log_probs(right_at: dict[int, set[int]]):
    """answer_log_probs whose argmax is right at iterations right_at[i % 2] for chain i, wrong elsewhere."""

    def log_probs(model, q, max_iters, device, batch=512) -> torch.Tensor:
        n, vocab = len(q.answers), int(q.answers.max()) + 2
        out = torch.zeros(max_iters, n, vocab)
        for i, answer in enumerate(q.answers):
            for r in range(1, max_iters + 1):
                out[r - 1, i, answer if r in right_at[i % 2] else (answer + 1) % vocab] = 1.0
        return out

    return log_probs


def test_iterations_chooses_r_on_the_even_chains_and_scores_the_odd_ones(runs, monkeypatch):
    # even-indexed (validation) chains are right at r = 3 and 4, odd-indexed (test) ones at r = 4 and 5:
    # the validation half picks r = 3 (the smaller of a tie), every chain together or the test half r = 4
    monkeypatch.setattr(loop_report, "answer_log_probs", fake_log_probs({0: {3, 4}, 1: {4, 5}}))
    it = loop_report.iterations(runs["depth"], max_iters=6)
    assert it["chosen_r"] == 3 and it["depth_chosen_r_validation"] == 4
    assert it["depth_chosen_r"] is None  # the test chains are all wrong at the chosen r
    assert it["depth_oracle_r"] == 4  # the view that lets the test chains choose finds r = 4
    assert all(a[2] == 1.0 and a[4] == 0.0 for a in it["validation"].values())
    assert all(a[4] == 1.0 and a[2] == 0.0 for a in it["test"].values())
    # the command line (its own process: the model's real log-probabilities) says how r was chosen
    result = symgen("analyze", "iterations", str(runs["depth"]), "--max-iters", "6")
    assert result.returncode == 0 and "chosen on the validation half over 1..6" in result.stdout


def test_lens_reads_every_checkpoint(runs):
    result = loop_report.lens(runs["systematic"], n=32)
    assert set(result["checkpoints"]) == {"20", "final"}  # the last step is final.safetensors
    grid = result["checkpoints"]["final"]["id"]["bridge_at_r1"]
    assert len(grid) == 4 and len(grid[0]) == 1  # 4 iterations of 1 layer
    assert result["checkpoints"]["20"] != result["checkpoints"]["final"]


def test_a_vanilla_run_has_nothing_to_iterate(runs):
    with pytest.raises(UserError, match="not a looped model"):
        loop_report.iterations(runs["vanilla"])
    result = symgen("analyze", "halting", str(runs["vanilla"]))
    assert (
        result.returncode == 2 and "not a looped model" in result.stderr and "Traceback" not in result.stderr
    )


def test_unknown_run_directory(tmp_path):
    result = symgen("analyze", "margins", str(tmp_path / "nope"))
    assert result.returncode == 2 and "not a run directory" in result.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["halting", "--kl-eps", "0"], "KL threshold 0.0 must be > 0"),
        (["halting", "--entropy-max", "-1"], "entropy threshold -1.0 must be > 0"),
        (["iterations", "--max-iters", "0"], "at least one iteration"),
        (["halting", "--max-iters", "0"], "at least one iteration"),
    ],
)
def test_bad_halting_thresholds_and_iteration_counts_are_refused(runs, args, message):
    result = symgen("analyze", args[0], str(runs["depth"]), *args[1:])
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
