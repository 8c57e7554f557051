"""`--executor slurm` against a stand-in Slurm on this machine (sbatch runs the script in the
background, srun runs its command, sacct reads the states sbatch wrote): submitit's real Slurm path
submits each run with the config's #SBATCH options, and a rerun waits for a job that still runs."""

import os
import threading
import time
from pathlib import Path

import pytest
from conftest import TINY

from symgen.errors import UserError
from symgen.experiments import suite
from symgen.experiments.executors import job_executor, train_here
from symgen.experiments.types import RunSpec

pytest.importorskip("submitit")

SBATCH = """#!/bin/bash
id=$(( $(cat "$FAKE_SLURM/next" 2>/dev/null || echo 100) + 1 ))
echo $id > "$FAKE_SLURM/next"
echo RUNNING > "$FAKE_SLURM/$id"
cp "$1" "$FAKE_SLURM/$id.sh"
(
  export SLURM_JOB_ID=$id SLURM_NTASKS=1 SLURM_PROCID=0 SLURM_LOCALID=0 SLURM_NODEID=0 SLURM_JOB_NUM_NODES=1
  if bash "$1"; then echo COMPLETED > "$FAKE_SLURM/$id"; else echo FAILED > "$FAKE_SLURM/$id"; fi
) </dev/null >/dev/null 2>&1 &
echo "Submitted batch job $id"
"""
SRUN = """#!/bin/bash
while [ $# -gt 0 ]; do
  case "$1" in
    --unbuffered) shift ;;
    --output) out=$2; shift 2 ;;
    --error) err=$2; shift 2 ;;
    *) break ;;
  esac
done
out=${out//%j/$SLURM_JOB_ID}; err=${err//%j/$SLURM_JOB_ID}
exec "$@" >>"${out//%t/0}" 2>>"${err//%t/0}"
"""
SACCT = """#!/bin/bash
echo "JobID|State|NodeList"
while [ $# -gt 0 ]; do
  if [ "$1" = -j ]; then
    echo "$2|$(cat "$FAKE_SLURM/$2" 2>/dev/null || echo PENDING)|node1"; shift 2
  else
    shift
  fi
done
"""

RUN = RunSpec("reverse", "reverse", overrides=[*TINY, "train.steps=40"])


@pytest.fixture
def slurm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in Slurm on PATH; returns the folder of its job states and scripts."""
    bin_dir, state = tmp_path / "bin", tmp_path / "slurm"
    bin_dir.mkdir()
    state.mkdir()
    for name, text in (("sbatch", SBATCH), ("srun", SRUN), ("sacct", SACCT)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SLURM", str(state))
    return state


def executor(tmp_path: Path):
    config = tmp_path / "cluster.yaml"
    config.write_text("partition: debug\ncpus: 2\nmem_gb: 4\ntime_min: 30\nsbatch: {account: proj}\n")
    cluster = job_executor("slurm", config, None)
    assert cluster is not None and cluster.max_jobs == 0  # the cluster schedules every ready run
    return cluster.__class__(cluster.kind, cluster.config, cluster.max_jobs, poll_s=0.1)


def test_each_run_is_one_slurm_job_with_the_configs_options(slurm: Path, tmp_path: Path):
    root = tmp_path / "runs"
    suite.train_all([RUN], root, jobs=1, progress=False, executor=executor(tmp_path))
    assert RUN.finished(root)
    (script,) = slurm.glob("*.sh")
    text = script.read_text()
    for option in ["--partition=debug", "--cpus-per-task=2", "--mem=4GB", "--time=30", "--account=proj"]:
        assert f"#SBATCH {option}\n" in text, option
    job_id = script.stem
    assert (root / "reverse.jobs" / f"{job_id}_0_log.err").exists()  # the job's logs beside its run

    train_here(RUN, tmp_path / "here", progress=False)
    here = (tmp_path / "here" / "reverse" / "final.safetensors").read_bytes()
    assert (root / "reverse" / "final.safetensors").read_bytes() == here


def test_a_rerun_waits_for_a_slurm_job_that_still_runs(slurm: Path, tmp_path: Path):
    root = tmp_path / "runs"
    folder = root / "reverse.jobs"
    folder.mkdir(parents=True)
    (folder / "job.json").write_text('{"executor": "slurm", "job_id": "42"}')
    (slurm / "42").write_text("RUNNING\n")  # a job of an earlier invocation, on the queue still

    def end_it() -> None:
        time.sleep(1.0)
        (slurm / "42").write_text("CANCELLED\n")

    ender = threading.Thread(target=end_it)
    ender.start()
    started = time.monotonic()
    with pytest.raises(UserError, match=r"run reverse failed in job 42 \(CANCELLED\)"):
        suite.train_all([RUN], root, jobs=1, progress=False, executor=executor(tmp_path))
    ender.join()
    assert time.monotonic() - started >= 1.0 and not list(slurm.glob("*.sh"))  # waited, submitted nothing
