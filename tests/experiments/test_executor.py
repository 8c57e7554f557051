"""`reproduce --executor`: the cluster config is refused in one line when wrong, a missing submitit or
Slurm says what to do, and the job scheduler submits a run only once the runs it needs are done."""

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import symgen

from symgen.errors import UserError
from symgen.experiments import executors
from symgen.experiments.executor_config import ExecutorConfig, load_executor_config
from symgen.experiments.executors import JobExecutor, Tracked, job_executor, slurm_parameters
from symgen.experiments.suite import needs
from symgen.experiments.types import RunSpec


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("partition: gpu\nnodes: 2\n", "unknown key nodes; allowed: cpus, gpus, mem_gb"),
        ("gpus: -1\n", "gpus=-1 must be >= 0"),
        ("cpus: 0\n", "cpus=0 must be >= 1"),
        ("time_min: two hours\n", "time_min: expected int, got 'two hours'"),
        ("mem_gb: [16]\n", "mem_gb: expected float"),
        ("sbatch: {time: 30}\n", "sbatch.time: set by time_min"),
        ("sbatch: {cpus_per_task: 4}\n", "sbatch.cpus_per_task: set by cpus"),
        ("sbatch: {account: [a, b]}\n", "sbatch.account: expected text"),
        ("sbatch: account=x\n", "sbatch must be a mapping"),
        ("- partition: gpu\n", "must be a YAML mapping"),
        ("partition: [gpu\n", "is not valid YAML"),
    ],
)
def test_a_bad_config_is_refused_naming_the_file_and_key(tmp_path: Path, text: str, fragment: str):
    path = write(tmp_path, text)
    with pytest.raises(UserError) as e:
        load_executor_config(path)
    assert str(e.value).startswith(f"--executor-config {path}") and fragment in str(e.value)
    assert "\n" not in str(e.value)


def test_a_config_becomes_the_sbatch_script_of_each_run(tmp_path: Path):
    submitit_slurm = pytest.importorskip("submitit.slurm.slurm")
    config = load_executor_config(
        write(
            tmp_path,
            """\
            partition: gpu
            gpus: 1
            cpus: 8
            mem_gb: 1.5
            time_min: 240
            sbatch: {account: my-project, exclusive: true}
            """,
        )
    )
    assert config == ExecutorConfig("gpu", 1, 8, 1.5, 240, {"account": "my-project", "exclusive": True})
    folder = tmp_path / "runs" / "unseen-copy.jobs"
    script = submitit_slurm._make_sbatch_string(
        command="python -m submitit.core._submit", folder=folder, **slurm_parameters(config, "unseen-copy")
    )
    for line in [
        "--partition=gpu",
        "--gpus-per-node=1",
        "--cpus-per-task=8",
        "--mem=1536MB",
        "--time=240",
        "--account=my-project",
        "--exclusive",
        "--job-name=symgen-unseen-copy",
        f"--output={folder}/%j_0_log.out",
    ]:
        assert f"#SBATCH {line}\n" in script, line
    defaults = slurm_parameters(ExecutorConfig(), "r")
    assert defaults == {"job_name": "symgen-r", "time": 60, "cpus_per_task": 1}  # the partition's own


def test_an_executor_config_needs_a_job_executor(tmp_path: Path):
    with pytest.raises(UserError, match="--executor-config applies to --executor submitit-local or slurm"):
        job_executor("local", write(tmp_path, "gpus: 1\n"), None)
    assert job_executor("local", None, 2) is None


def test_without_submitit_a_job_executor_says_what_to_install(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "submitit", None)  # `import submitit` now fails
    for kind in ("slurm", "submitit-local"):
        with pytest.raises(UserError, match=r"needs the submitit package: pip install -e '\.\[cluster\]'"):
            job_executor(kind, None, None)


def test_slurm_needs_sbatch_on_the_path(monkeypatch: pytest.MonkeyPatch):
    pytest.importorskip("submitit")
    monkeypatch.setattr(executors.shutil, "which", lambda name: None)
    with pytest.raises(UserError, match="sbatch and srun are not on this machine's PATH"):
        job_executor("slurm", None, None)
    local = job_executor("submitit-local", None, None)
    assert local is not None and local.max_jobs >= 1  # one job per core unless --jobs says otherwise
    assert job_executor("submitit-local", None, 3).max_jobs == 3


def test_cli_slurm_without_submitit_exits_2_with_one_line(tmp_path: Path):
    code = (
        "import sys; sys.modules['submitit'] = None; sys.argv = ['symgen', 'reproduce', '--suite', 'smoke', "
        f"'--only', 'reverse', '--executor', 'slurm', '--out', {str(tmp_path / 'out')!r}]; "
        "from symgen.cli import main; main()"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "pip install -e '.[cluster]'" in done.stderr
    assert not (tmp_path / "out" / "runs").exists()  # refused before any run started


def test_cli_bad_config_exits_2_with_one_line(tmp_path: Path):
    config = write(tmp_path, "partition: gpu\ngpu: 1\n")
    out = tmp_path / "out"
    args = ["reproduce", "--suite", "smoke", "--only", "reverse", "--out", str(out)]
    done = symgen(*args, "--executor", "slurm", "--executor-config", str(config))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "unknown key gpu; allowed: cpus, gpus" in done.stderr
    local = symgen(*args, "--executor-config", str(config))
    assert local.returncode == 2 and "--executor-config applies to" in local.stderr
    assert not (out / "runs").exists()


class FakeJobs:
    """Stands in for submitit: a job 'runs' for a few polls, then its run is finished or not."""

    def __init__(self, polls: dict[str, int], broken: set[str] = frozenset()):
        self.polls, self.broken, self.events = polls, broken, []

    def start(self, run: RunSpec, run_root: Path) -> Tracked:  # replaces JobExecutor._start
        self.events.append(("submit", run.name, time.monotonic()))
        left = [self.polls.get(run.name, 1)]

        def done() -> bool:
            left[0] -= 1
            if left[0] > 0:
                return False
            if run.name not in self.broken:
                (run_root / run.name).mkdir(parents=True, exist_ok=True)
                (run_root / run.name / "summary.json").write_text("{}")
            self.events.append(("end", run.name, time.monotonic()))
            return True

        return Tracked(run, f"{run.name}-job", run_root / f"{run.name}.jobs" / "err", done, lambda: "FAILED")


def at(events: list, kind: str, name: str) -> float:
    return next(t for k, n, t in events if k == kind and n == name)


def test_a_run_is_submitted_once_the_runs_it_needs_are_done(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    fake = FakeJobs({"source": 5})
    monkeypatch.setattr(JobExecutor, "_start", fake.start)
    runs = [
        RunSpec("source", "reverse"),
        RunSpec("dependent", "reverse", after=["source"]),
        RunSpec("other", "reverse"),
        RunSpec("third", "reverse"),
    ]
    extended = []
    JobExecutor("submitit-local", max_jobs=2, poll_s=0.001).train(runs, tmp_path, needs, extended.append)
    events = fake.events
    assert at(events, "submit", "other") < at(events, "end", "source")  # a free slot did not wait
    assert at(events, "submit", "third") < at(events, "end", "source")
    assert at(events, "submit", "dependent") > at(events, "end", "source")
    assert [r.name for r in extended] == [n for k, n, _ in events if k == "submit"]  # before each submit
    assert all(r.finished(tmp_path) for r in runs)


def test_a_failed_job_submits_no_further_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    fake = FakeJobs({"source": 4, "broken": 1}, broken={"broken"})
    monkeypatch.setattr(JobExecutor, "_start", fake.start)
    runs = [RunSpec("source", "reverse"), RunSpec("broken", "reverse"), RunSpec("later", "reverse")]
    failed = r"run broken failed in job broken-job \(FAILED\); see .*broken\.jobs"
    with pytest.raises(UserError, match=failed):
        JobExecutor("slurm", max_jobs=2, poll_s=0.001).train(runs, tmp_path, needs, lambda r: None)
    assert "later" not in {n for _, n, _ in fake.events}
    assert ("end", "source") in {(k, n) for k, n, _ in fake.events}  # the job in flight was waited for


def test_a_job_of_an_earlier_invocation_is_waited_for_not_submitted_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    pytest.importorskip("submitit")
    if not Path("/proc/self/cmdline").exists():
        pytest.skip("needs /proc to tell a local job's process")
    run = RunSpec("reverse", "reverse")
    folder = tmp_path / "reverse.jobs"
    folder.mkdir()
    # a process that looks like a submitit job (its command line names submitit) and trains nothing
    earlier = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.5)", "submitit"])
    cmdline = Path(f"/proc/{earlier.pid}/cmdline")
    for _ in range(400):  # until the child has exec'd: before that its command line is this process's
        if b"submitit" in cmdline.read_bytes():
            break
        time.sleep(0.01)
    (folder / "job.json").write_text(f'{{"executor": "submitit-local", "job_id": "{earlier.pid}"}}')

    def no_submission(*args: object) -> None:
        raise AssertionError("submitted a second job for a run whose job still runs")

    monkeypatch.setattr(JobExecutor, "_executor", no_submission)
    ended_before_return = None
    with pytest.raises(UserError, match=f"run reverse failed in job {earlier.pid}"):
        try:
            JobExecutor("submitit-local", poll_s=0.05).train([run], tmp_path, needs, lambda r: None)
        finally:
            ended_before_return = earlier.poll() is not None
            earlier.wait()
    assert ended_before_return  # it waited for that job to end
