"""`reproduce --jobs N` trains up to N runs at a time, each started only once the runs it needs have
finished: a worker never sits waiting on a dependency while another run could train."""

import threading
import time
from pathlib import Path

import pytest

from symgen.errors import UserError
from symgen.experiments import suite
from symgen.experiments.types import RunSpec


@pytest.fixture
def trained(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, float]]:
    """Stands in for the training subprocess: records when each run starts and ends."""
    events: list[tuple[str, str, float]] = []
    lock = threading.Lock()
    seconds = {"source": 0.4, "broken": 0.05}

    def train(run: RunSpec, run_root: Path) -> None:
        with lock:
            events.append(("start", run.name, time.monotonic()))
        time.sleep(seconds.get(run.name, 0.1))
        if run.name == "broken":
            raise UserError("run broken failed")
        with lock:
            events.append(("end", run.name, time.monotonic()))

    monkeypatch.setattr(suite, "_train_in_subprocess", train)
    return events


def at(events: list, kind: str, name: str) -> float:
    return next(t for k, n, t in events if k == kind and n == name)


def test_an_independent_run_starts_while_a_dependent_one_waits_for_its_source(trained, tmp_path: Path):
    runs = [
        RunSpec("source", "reverse"),
        RunSpec("dependent", "reverse", after=["source"]),  # listed before the independent runs
        RunSpec("other", "reverse"),
        RunSpec("third", "reverse"),
    ]
    suite.train_all(runs, tmp_path, jobs=2, progress=False)
    assert at(trained, "start", "other") < at(trained, "end", "source")  # the second worker did not wait
    assert at(trained, "start", "third") < at(trained, "end", "source")
    assert at(trained, "start", "dependent") >= at(trained, "end", "source")
    assert sorted(n for k, n, _ in trained if k == "end") == ["dependent", "other", "source", "third"]


def test_a_failed_run_starts_no_further_run(trained, tmp_path: Path):
    runs = [RunSpec("source", "reverse"), RunSpec("broken", "reverse"), RunSpec("later", "reverse")]
    with pytest.raises(UserError, match="run broken failed"):
        suite.train_all(runs, tmp_path, jobs=2, progress=False)
    assert "later" not in {n for _, n, _ in trained}
    assert ("end", "source") in {(k, n) for k, n, _ in trained}  # the run already training finished
