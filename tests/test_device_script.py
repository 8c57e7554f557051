"""scripts/device_unseen_paper.sh: a warm-up run measures the speed, scripts/device_plan.py plans the
four paper-architecture runs to fit the limit from it, and the runs and the report follow. The plan
is checked on given speeds and times, never by timing this machine; the script itself runs shrunk,
its steps fixed (FIXED_STEPS), so that nothing here depends on how busy the machine is."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
SCRIPT = SCRIPTS / "device_unseen_paper.sh"
spec = importlib.util.spec_from_file_location("device_plan", SCRIPTS / "device_plan.py")
device_plan = importlib.util.module_from_spec(spec)
spec.loader.exec_module(device_plan)


def training_seconds(p: dict, steps: int) -> float:
    """Seconds one run of plan `p` spends in training steps (stacked seeds: S times one seed's work)."""
    return steps * p["seeds"] / p["warmup_steps_per_second"]


@pytest.mark.parametrize(
    ("rate", "full_eval", "overhead", "left", "evals", "seeds"),
    [(5.0, 1.0, 6.0, 680.0, 8, 1), (40.0, 12.0, 30.0, 600.0, 8, 3), (2.5, 0.2, 3.0, 45.0, 2, 1)],
)
def test_the_plan_fits_the_time_left_in_whole_evaluations(rate, full_eval, overhead, left, evals, seeds):
    p = device_plan.plan(rate, full_eval, overhead, left, evals, seeds)
    steps = p["train_steps"]
    assert steps >= evals and steps % evals == 0 and p["eval_every"] * evals == steps
    evaluations = p["full_eval_seconds"] * (1 + (evals - 1) / 4)  # the last full, the others light
    for_training = left / 4 - overhead - evaluations
    # within 90 % of the time left to each run's steps, and one evaluation interval more would not be
    assert training_seconds(p, steps) <= 0.9 * for_training < training_seconds(p, steps + evals)
    assert 4 * (overhead + evaluations + training_seconds(p, steps)) <= left


def test_stacked_seeds_cost_their_count_in_steps_and_evaluations():
    three = device_plan.plan(30.0, 2.0, 10.0, 900.0, 8, 3)
    as_one = device_plan.plan(10.0, 6.0, 10.0, 900.0, 8, 1)  # a third of the speed, thrice the evaluation
    assert (
        three["train_steps"]
        == as_one["train_steps"]
        < device_plan.plan(30.0, 2.0, 10.0, 900.0, 8, 1)["train_steps"]
    )


def write_warmup(out: Path, elapsed: dict[int, float], train_seconds: float) -> None:
    (out / "warmup").mkdir(parents=True)
    lines = [json.dumps({"step": s, "elapsed_s": e}) for s, e in elapsed.items()]
    (out / "warmup" / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    (out / "warmup" / "summary.json").write_text(json.dumps({"train_seconds": train_seconds}))


def test_the_plan_reads_the_warmup_and_refuses_a_limit_too_short(tmp_path: Path, capsys):
    # 5 steps/s over steps 11-30, a 1 s evaluation at step 40, 6 s of start-up and saving
    write_warmup(tmp_path, {10: 2.0, 20: 4.0, 30: 6.0, 40: 9.0}, train_seconds=9.0)
    at = {"started": "90", "warm_start": "100", "reserve": "15"}
    argv = [str(tmp_path), "12", at["started"], at["warm_start"], at["reserve"], "8", "1"]
    assert device_plan.main(argv, now=115.0) == 0
    plan = json.loads((tmp_path / "plan.json").read_text())
    # 720 - 25 - 15 = 680 s for four runs: 170 - 6 - 1 - 7/4 s of training each, 90 % of it at 5 steps/s
    assert plan["train_steps"] == 720 and plan["eval_every"] == 90 and plan["warmup_steps"] == 24
    assert plan["warmup_steps_per_second"] == 5.0 and plan["overhead_seconds_per_run"] == 6.0

    argv[1] = "1"  # 60 - 25 - 15 = 20 s for four runs: less than each run's start-up
    assert device_plan.main(argv, now=115.0) == 1
    assert "the limit of 1 minutes leaves no time to train four runs" in capsys.readouterr().err
    assert device_plan.main([*argv, "4"], now=115.0) == 0  # FIXED_STEPS: the steps are given
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert plan["train_steps"] == 4 and plan["planned_steps"] == 0 and plan["eval_every"] == 1


def test_the_shrunk_script_trains_its_steps_and_writes_the_report(tmp_path: Path):
    out = tmp_path / "paper"
    env = os.environ | {"SHRINK": "1", "PYTHON": sys.executable, "OMP_NUM_THREADS": "1"}
    env |= {"FIXED_STEPS": "4", "N_SEEDS": "2"}
    result = subprocess.run(["bash", str(SCRIPT), str(out)], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    plan = json.loads((out / "plan.json").read_text())
    assert plan["train_steps"] == 4 and plan["warmup_steps_per_second"] > 0 and "planned_steps" in plan
    assert "steps/s" in result.stdout and set(plan["runs"]) == {
        "unseen-standard",
        "unseen-copy",
        "unseen-copy-frozen",
        "unseen-copy-forget",
    }
    header = json.loads((out / "claims.json").read_text())
    assert header["suite"] == "paper" and "train.steps=4" in header["set"] and header["seeds"] == [0, 1]
    assert "model.d_model=32" in header["set"] and header["runs"] == list(plan["runs"])
    config = (out / "runs" / "unseen-copy-forget" / "seed-1" / "config.yaml").read_text()
    assert "steps: 4" in config and "d_model: 32" in config
    assert "changed by --set" in (out / "report.html").read_text()


def test_a_seed_count_under_the_old_name_is_refused(tmp_path: Path):
    env = os.environ | {"SEEDS": "3", "PYTHON": sys.executable}
    result = subprocess.run(
        ["bash", str(SCRIPT), str(tmp_path / "p")], capture_output=True, text=True, env=env
    )
    assert result.returncode == 2 and "N_SEEDS=N" in result.stderr and not (tmp_path / "p").exists()
