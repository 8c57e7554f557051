"""Runs as submitit-local jobs: a job stopped mid-run loses at most one checkpoint interval, and its
final weights equal an uninterrupted run's: after a preemption's warning signal the job requeues
itself; after a kill the same command run again continues it."""

import json
import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest
from conftest import TINY, symgen

from symgen.errors import UserError
from symgen.experiments import suite
from symgen.experiments.executors import JobExecutor, train_here
from symgen.experiments.registry import select
from symgen.experiments.types import RunSpec
from symgen.training.checkpoint import list_checkpoints

pytest.importorskip("submitit")
if not Path("/proc/self/stat").exists():
    pytest.skip("finding a local job's training process reads /proc", allow_module_level=True)

# 160 steps, a checkpoint every 20 (TINY): the job is stopped just after step 20's checkpoint
STEPS = ["train.steps=160", "train.eval_every=80", "model.dropout=0.1"]
RUN = RunSpec("reverse", "reverse", overrides=[*TINY, *STEPS])
FIRST = 20


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The final weights of the run trained without a stop, in this process."""
    root = tmp_path_factory.mktemp("reference")
    train_here(RUN, root, progress=False)
    return (root / RUN.name / "final.safetensors").read_bytes()


def training_process(controller: int) -> int:
    """The process a local job trains in: the child of its controller (the job id)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == controller:
            return int(stat.parent.name)
    raise AssertionError(f"job {controller} has no training process")


def stop_after_first_checkpoint(root: Path, sig: signal.Signals, seen: dict) -> threading.Thread:
    """Send `sig` to the job's training process once its first checkpoint is written."""

    def stop() -> None:
        checkpoints, record = root / RUN.name / "checkpoints", root / f"{RUN.name}.jobs" / "job.json"
        deadline = time.time() + 120
        while not (checkpoints / f"step_{FIRST:07d}.safetensors").exists():
            assert time.time() < deadline, "the job wrote no checkpoint"
            time.sleep(0.005)
        os.kill(training_process(int(json.loads(record.read_text())["job_id"])), sig)
        # on a busy machine a requeued job may finish (and clear its checkpoints) before this reads them
        left = list_checkpoints(checkpoints) if checkpoints.is_dir() else []
        seen["last checkpoint"] = left[-1] if left else None

    thread = threading.Thread(target=stop)
    thread.start()
    return thread


def resumed_from(root: Path) -> list[int]:
    """The steps the run's jobs said they continue from (their logs, beside the run)."""
    logs = "".join(p.read_text() for p in sorted((root / f"{RUN.name}.jobs").glob("*_log.err")))
    return [int(step) for step in re.findall(r"continues from step (\d+)", logs)]


def test_a_killed_job_continues_from_its_last_checkpoint_when_the_command_runs_again(
    tmp_path: Path, reference: bytes
):
    root, seen = tmp_path / "runs", {}
    executor = JobExecutor("submitit-local", max_jobs=1, poll_s=0.05)
    killer = stop_after_first_checkpoint(root, signal.SIGKILL, seen)  # as a scheduler kills outright
    with pytest.raises(UserError, match=r"run reverse failed in job \d+ .*reverse\.jobs"):
        suite.train_all([RUN], root, jobs=1, progress=False, executor=executor)
    killer.join()
    assert not RUN.finished(root), "the run finished before it could be killed"

    suite.train_all([RUN], root, jobs=1, progress=False, executor=executor)  # the same command again
    assert RUN.finished(root)
    assert resumed_from(root) == [seen["last checkpoint"]] and seen["last checkpoint"] >= FIRST
    assert (root / RUN.name / "final.safetensors").read_bytes() == reference
    assert len(list((root / f"{RUN.name}.jobs").glob("*_log.err"))) == 2  # each job's log beside the run


def test_a_preempted_job_requeues_itself_and_resumes(tmp_path: Path, reference: bytes):
    # Slurm's warning before a time limit or a preemption (--signal=USR2@90); the job's own
    # submitit requeues it, and this one invocation ends with the run finished. On a busy machine the
    # warning can land after the last step (finding the process reads /proc): then nothing requeues,
    # the run must still be whole, and the scenario is tried again in a fresh folder
    for attempt in range(3):
        root, seen = tmp_path / f"runs-{attempt}", {}
        executor = JobExecutor("submitit-local", max_jobs=1, poll_s=0.05)
        warner = stop_after_first_checkpoint(root, signal.SIGUSR2, seen)
        suite.train_all([RUN], root, jobs=1, progress=False, executor=executor)
        warner.join()
        assert RUN.finished(root)
        assert (root / RUN.name / "final.safetensors").read_bytes() == reference
        if resumed := resumed_from(root):
            break
    else:
        pytest.fail("in three tries the warning never reached a job before its last step")
    [step] = resumed  # one requeue, from a checkpoint after the stop's
    assert step >= FIRST and seen["last checkpoint"] in (step, None)


def test_reproduce_with_submitit_local_trains_each_run_as_a_job(tmp_path: Path):
    out = tmp_path / "out"
    args = ["reproduce", "--suite", "smoke", "--only", "reverse", "--no-progress", "--out", str(out)]
    done = symgen(*args, "--executor", "submitit-local")
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(r"reverse: job \d+ submitted", done.stderr) and (out / "claims.json").exists()
    assert list((out / "runs" / "reverse.jobs").glob("*_0_log.err"))  # the job's log beside its run

    (spec,) = select("smoke", "reverse")[0].runs("smoke")
    train_here(spec, tmp_path / "here", progress=False)
    job_weights = (out / "runs" / "reverse" / "final.safetensors").read_bytes()
    assert job_weights == (tmp_path / "here" / "reverse" / "final.safetensors").read_bytes()

    again = symgen(*args, "--executor", "submitit-local")
    assert again.returncode == 0 and "1 of 1 runs finished already; training 0" in again.stderr
    assert "submitted" not in again.stderr
