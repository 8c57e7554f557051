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
