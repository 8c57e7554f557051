"""What an output's training cost, run by run, from the runs' own summaries.

Seconds are counted once per training process: the seeds of a stacked run share one process (each
seed's summary holds the process's seconds), and an extension (`extends`) continues its source's
clock, so its own cost is what it added.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from symgen.experiments.types import RunSpec, Section, Table
from symgen.training.run_dir import read_summary


@dataclass(frozen=True)
class RunCost:
    name: str
    seeds: int
    steps: int
    layer_passes: int | None
    seconds: float  # this run's own training seconds, all its seeds together
    part: str = ""  # the output it came from, in a book of several


def process_seconds(summaries: list[dict]) -> float:
    """Training seconds of the processes that wrote these run summaries (a stacked one once)."""
    return sum(s["train_seconds"] / s.get("stacked_seeds", 1) for s in summaries)


def run_costs(runs: list[RunSpec], run_root: Path) -> list[RunCost]:
    """Each finished run's own cost, in the order given (each summary read once)."""
    summaries = {r.name: [read_summary(d) for d in r.run_dirs(run_root)] for r in runs}
    costs = []
    for run in runs:
        own = summaries[run.name]
        seconds = process_seconds(own) - process_seconds(summaries.get(run.extends, []))
        first = own[0]
        costs.append(
            RunCost(run.name, len(own), first["steps"], first.get("layer_passes"), max(seconds, 0.0))
        )
    return costs


def as_header(costs: list[RunCost]) -> dict[str, dict]:
    """The costs as claims.json's `timing.runs` holds them, by run name."""
    return {
        c.name: {
            "seconds": round(c.seconds, 1),
            "seeds": c.seeds,
            "steps": c.steps,
            "layer_passes": c.layer_passes,
        }
        for c in costs
    }


def from_header(runs: dict[str, dict], part: str = "") -> list[RunCost]:
    """The costs a claims.json header holds (`timing.runs`), as measured by the output `part`."""
    return [
        RunCost(n, r["seeds"], r["steps"], r.get("layer_passes"), r["seconds"], part) for n, r in runs.items()
    ]


def cost_table(costs: list[RunCost]) -> Table:
    """One row per run, the most costly first, with its share of the total (and the output it came
    from, when the costs name one)."""
    total = sum(c.seconds for c in costs) or 1.0
    parts = any(c.part for c in costs)
    rows = [
        [
            *([c.part] if parts else []),
            c.name,
            c.seeds,
            c.steps,
            "—" if c.layer_passes is None else c.layer_passes,
            round(c.seconds),
            round(c.seconds / c.seeds),
            f"{100 * c.seconds / total:.0f} %",
        ]
        for c in sorted(costs, key=lambda c: -c.seconds)
    ]
    headers = ["run", "seeds", "steps", "layer passes", "training s", "s per seed", "share"]
    return Table(
        ["part", *headers] if parts else headers,
        rows,
        "Training seconds measured by each run (summed over resumes, one process counted once: stacked "
        "seeds share one; an extension counts what it added to the run it continues).",
    )


def time_section(costs: list[RunCost], parts: int = 0) -> Section:
    """The report's last section: its runs by training time (a book's: every part's, `parts` of them)."""
    if not costs:
        return Section("Training time per run", ["No run here records its training time."])
    total = f"{sum(c.seconds for c in costs) / 3600:.1f} h of training over {len(costs)} runs"
    return Section(
        "Training time per run",
        [total + (f" of {parts} parts." if parts else ".")],
        tables=[cost_table(costs)],
    )
