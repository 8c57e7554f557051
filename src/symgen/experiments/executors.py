"""Where `reproduce` trains its runs: in its own process or side by side (`--executor local`, suite.py),
or as one job per run through submitit (`submitit-local`: jobs on this machine; `slurm`).

A job trains its run as `symgen train --resume` does, so a job the scheduler stops loses at most the
steps since the run's last checkpoint. The warning signal a time limit or a preemption sends first
requeues the same job (submitit calls `TrainJob.checkpoint`), which goes on from that checkpoint; a
job killed outright fails the invocation, and the same command run again submits the run anew, which
again goes on from its last checkpoint.

A run that needs another (`after`, `extends`) is submitted once that run's job has finished: the
submitting process waits, as `--jobs N` does, rather than Slurm dependencies, since it stays anyway
to analyse the runs and submitit-local has no dependencies. Each run's job logs and its last job's id
(`job.json`) lie beside the run, in OUT/runs/NAME.jobs/: the same command run again while a job of an
earlier invocation still runs waits for that job instead of starting a second trainer on its run.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from symgen.config import resolve
from symgen.errors import UserError
from symgen.experiments.executor_config import ExecutorConfig, load_executor_config
from symgen.experiments.types import RunSpec
from symgen.training.checkpoint import atomic_write_json
from symgen.training.run import train_run
from symgen.training.stacked import train_seeds

EXECUTORS = ("local", "submitit-local", "slurm")
INSTALL = "pip install -e '.[cluster]' (or pip install submitit)"
MAX_TIMEOUTS = 10  # requeues after a time limit before a job gives up (preemptions do not count)
# Slurm states of a job that has not ended yet (a requeued or preempted one comes back)
ACTIVE = {
    "PENDING",
    "CONFIGURING",
    "RUNNING",
    "COMPLETING",
    "SUSPENDED",
    "REQUEUED",
    "REQUEUE_FED",
    "REQUEUE_HOLD",
    "RESIZING",
    "PREEMPTED",
}


def train_here(run: RunSpec, run_root: Path, progress: bool) -> None:
    """Train one run in this process, going on from its last checkpoint (a finished run is left)."""
    cfg = resolve(run.recipe, run.resolved_overrides(run_root))
    if run.seeds:
        train_seeds(cfg, list(run.seeds), run_root / run.name, resume=True, progress=progress)
    else:
        train_run(cfg, run_root / run.name, resume=True, progress=progress)


@dataclass(frozen=True)
class TrainJob:
    """What one job runs: its run, trained in the folder `reproduce` was started from (the run root
    and `{runs}` overrides may be relative to it)."""

    run: RunSpec
    run_root: Path
    cwd: Path

    def __call__(self) -> None:
        os.chdir(self.cwd)
        train_here(self.run, self.run_root, progress=False)

    def checkpoint(self) -> Any:
        """Called by submitit on a time limit's or preemption's warning: requeue this same job, which
        resumes from the run's last checkpoint (the steps after it are trained again)."""
        from submitit.helpers import DelayedSubmission

        return DelayedSubmission(self)


def jobs_folder(run_root: Path, name: str) -> Path:
    """Where a run's job logs lie: beside its run directory."""
    return run_root / f"{name}.jobs"


def slurm_parameters(config: ExecutorConfig, name: str) -> dict[str, Any]:
    """submitit's SlurmExecutor parameters for one run's job."""
    params: dict[str, Any] = {
        "job_name": f"symgen-{name}",
        "time": config.time_min,
        "cpus_per_task": config.cpus,
    }
    if config.partition:
        params["partition"] = config.partition
    if config.gpus:
        params["gpus_per_node"] = config.gpus
    if config.mem_gb:
        mem = config.mem_gb
        params["mem"] = f"{int(mem)}GB" if float(mem).is_integer() else f"{round(mem * 1024)}MB"
    if config.sbatch:
        params["additional_parameters"] = dict(config.sbatch)
    return params


def local_parameters(config: ExecutorConfig) -> dict[str, Any]:
    """submitit's LocalExecutor parameters: its default time limit (2 minutes) would stop most runs."""
    return {"timeout_min": config.time_min, "gpus_per_node": config.gpus}


@dataclass
class Tracked:
    """A job the invocation waits for: one it submitted, or one of an earlier invocation."""

    run: RunSpec
    job_id: str
    log: Path
    done: Callable[[], bool]
    state: Callable[[], str]


def _process_alive(pid: int) -> bool:
    """Whether a local job's controller process still runs (a reused process id is not it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    cmdline = Path(f"/proc/{pid}/cmdline")
    return not cmdline.parent.exists() or b"submitit" in cmdline.read_bytes()


@dataclass(frozen=True)
class JobExecutor:
    """`--executor submitit-local | slurm`: every run one job, with `config`'s resources; at most
    `max_jobs` in flight at once (0: every run whose prerequisites are done)."""

    kind: str
    config: ExecutorConfig = field(default_factory=ExecutorConfig)
    max_jobs: int = 0
    poll_s: float = 1.0

    def train(
        self,
        todo: list[RunSpec],
        run_root: Path,
        needs: Callable[[RunSpec], list[str]],
        before: Callable[[RunSpec], None],
    ) -> None:
        """Every run of `todo` as one job, each submitted once the runs it needs have finished (after
        `before`, in this process); returns when all have finished. A failed run starts no other:
        the jobs in flight finish, then its failure is raised, as `--jobs N` does."""
        pending, running, finished = list(todo), {}, set()
        in_todo = {r.name for r in todo}
        failed = ""

        def ready(run: RunSpec) -> bool:
            return all(dep not in in_todo or dep in finished for dep in needs(run))

        while pending or running:
            while not failed and (not self.max_jobs or len(running) < self.max_jobs):
                run = next((r for r in pending if ready(r)), None)
                if run is None:
                    break
                pending.remove(run)
                before(run)
                running[run.name] = self._start(run, run_root)
            time.sleep(self.poll_s)
            for name, job in list(running.items()):
                if not job.done():
                    continue
                del running[name]
                if job.run.finished(run_root):
                    finished.add(name)
                    click.echo(f"[{len(finished)}/{len(todo)}] {name} finished (job {job.job_id})", err=True)
                elif not failed:
                    failed = f"run {name} failed in job {job.job_id} ({job.state()}); see {job.log}"
                    pending.clear()
        if failed:
            raise UserError(failed)

    def _start(self, run: RunSpec, run_root: Path) -> Tracked:
        folder = jobs_folder(run_root, run.name).absolute()
        earlier = self._earlier(run, folder)
        if earlier is not None:
            click.echo(
                f"{run.name}: job {earlier.job_id} of an earlier invocation still runs; waiting", err=True
            )
            return earlier
        job = self._executor(folder, run.name).submit(TrainJob(run, run_root, Path.cwd()))
        atomic_write_json(folder / "job.json", {"executor": self.kind, "job_id": job.job_id})
        click.echo(f"{run.name}: job {job.job_id} submitted (logs: {folder})", err=True)
        return Tracked(run, job.job_id, job.paths.stderr, job.done, lambda: job.state)

    def _executor(self, folder: Path, name: str) -> Any:
        import submitit

        if self.kind == "slurm":
            executor = submitit.SlurmExecutor(folder, max_num_timeout=MAX_TIMEOUTS)
            executor.update_parameters(**slurm_parameters(self.config, name))
        else:
            executor = submitit.LocalExecutor(folder, max_num_timeout=MAX_TIMEOUTS)
            executor.update_parameters(**local_parameters(self.config))
        return executor

    def _earlier(self, run: RunSpec, folder: Path) -> Tracked | None:
        """The job an earlier invocation submitted for this run, when it has not ended."""
        try:
            record = json.loads((folder / "job.json").read_text())
            job_id = str(record["job_id"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if record.get("executor") != self.kind:
            return None
        log = folder / f"{job_id}_0_log.err"
        if self.kind == "slurm":
            import submitit

            job = submitit.SlurmJob(folder, job_id)

            def state() -> str:
                return (job.get_info(mode="force").get("State") or "UNKNOWN").split()[0]

            if state() not in ACTIVE:
                return None
            return Tracked(run, job_id, log, lambda: state() not in ACTIVE, state)
        if not job_id.isdigit() or not _process_alive(int(job_id)):
            return None
        return Tracked(
            run, job_id, log, lambda: not _process_alive(int(job_id)), lambda: "ended with its process"
        )


def job_executor(kind: str, config: Path | None, jobs: int | None) -> JobExecutor | None:
    """The executor `--executor KIND [--executor-config FILE] [--jobs N]` asks for (None: local),
    refused in one line when the config is wrong, submitit is missing, or Slurm is not here."""
    if kind not in EXECUTORS:
        raise UserError(f"--executor {kind}: allowed are {', '.join(EXECUTORS)}")
    if kind == "local":
        if config is not None:
            raise UserError("--executor-config applies to --executor submitit-local or slurm")
        return None
    settings = load_executor_config(config) if config is not None else ExecutorConfig()
    try:
        import submitit  # noqa: F401
    except ImportError:
        raise UserError(f"--executor {kind} needs the submitit package: {INSTALL}") from None
    if kind == "slurm" and not (shutil.which("sbatch") and shutil.which("srun")):
        raise UserError(
            "--executor slurm: sbatch and srun are not on this machine's PATH; run it on a Slurm "
            "login node (--executor submitit-local runs the same jobs here)"
        )
    if jobs is None:  # on one machine a job per core; a cluster schedules its own
        jobs = (os.cpu_count() or 1) if kind == "submitit-local" else 0
    return JobExecutor(kind, settings, max_jobs=jobs)
