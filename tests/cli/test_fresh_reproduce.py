"""A fresh `reproduce` says nothing about resuming; a run it continues says where from."""

from pathlib import Path

from conftest import symgen

SMOKE = ["reproduce", "--suite", "smoke", "--only", "reverse", "--no-progress"]


def test_a_fresh_suite_prints_no_resume_line_and_a_continued_run_says_its_step(tmp_path: Path):
    out = tmp_path / "r"
    fresh = symgen(*SMOKE, "--out", str(out))
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    assert "--resume" not in fresh.stderr and "0 of 1 runs finished already; training 1" in fresh.stderr
    (out / "runs" / "reverse" / "summary.json").unlink()  # as if killed after its last checkpoint
    again = symgen(*SMOKE, "--out", str(out))
    assert again.returncode == 0, again.stderr[-2000:]
    assert (
        f"--resume: {out / 'runs' / 'reverse'} continues from step 20 (its last checkpoint)" in again.stderr
    )

    stacked = symgen(*SMOKE, "--seeds", "3-4", "--out", str(tmp_path / "s"))
    assert stacked.returncode == 0 and "--resume" not in stacked.stderr, stacked.stderr[-2000:]


def test_a_fresh_run_in_a_worker_says_nothing_about_resuming_and_a_continued_one_does(tmp_path: Path):
    out = tmp_path / "r"
    fresh = symgen(*SMOKE, "--jobs", "2", "--seeds", "0-1", "--out", str(out))
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    log = out / "runs" / "reverse.log"  # a worker's run writes its own log
    assert "--resume" not in log.read_text()
    (out / "runs" / "reverse" / "seed-1" / "summary.json").unlink()  # as if killed at its last checkpoint
    again = symgen(*SMOKE, "--jobs", "2", "--seeds", "0-1", "--out", str(out))
    assert again.returncode == 0, again.stderr[-2000:]
    assert "continues from step 20 (its last checkpoint)" in log.read_text()
