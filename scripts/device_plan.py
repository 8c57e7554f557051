"""The plan of scripts/device_unseen_paper.sh: train.steps per run such that its four runs, their
evaluations and the report fit the time limit, from the speed its warm-up run measured.

    python scripts/device_plan.py OUT LIMIT_MIN STARTED WARM_START RESERVE_S EVALS SEEDS [FIXED_STEPS]

reads OUT/warmup (metrics.jsonl, summary.json), writes OUT/plan.json and prints it; exits 1 with
one line when the limit leaves no time for one evaluation interval per run. `plan` is the
arithmetic alone, given the measured speed, so it can be checked without timing anything.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

RUNS = 4  # the paper-architecture rows the script trains


def plan(
    rate: float,
    full_eval: float,
    overhead: float,
    left: float,
    evals: int,
    seeds: int,
    fixed_steps: int | None = None,
) -> dict[str, float | int]:
    """Steps per run from the warm-up's speed: `rate` (steps/s of one seed), `full_eval` (seconds of
    one full evaluation), `overhead` (seconds per run besides training: start-up, data, saving) and
    `left` (seconds left for the four runs). Stacked seeds cost at most S times one seed's work.
    Light evaluations read a quarter of a full one; the last is full. 10 % is kept to spare.
    `fixed_steps` (FIXED_STEPS) replaces the planned steps, which are kept as planned_steps."""
    rate, full_eval = rate / seeds, full_eval * seeds
    per_run = left / RUNS - overhead - full_eval - (evals - 1) * full_eval / 4
    planned = max(math.floor(0.9 * rate * per_run / evals) * evals, 0)  # a whole number of evaluations
    steps = planned if fixed_steps is None else fixed_steps
    return {
        "seeds": seeds,
        **({} if fixed_steps is None else {"planned_steps": planned}),
        "warmup_steps_per_second": round(rate * seeds, 3),
        "full_eval_seconds": round(full_eval, 2),
        "overhead_seconds_per_run": round(overhead, 2),
        "train_steps": steps,
        "eval_every": max(steps // evals, 1),
        "warmup_steps": max(steps // 30, 1),  # the paper's 1000 of 30 000 steps
    }


def from_warmup(
    out: Path,
    limit_min: float,
    started: float,
    warm_start: float,
    reserve: float,
    evals: int,
    seeds: int,
    now: float,
    fixed_steps: int | None = None,
) -> dict[str, float | int]:
    """The plan from the warm-up run in OUT/warmup (40 steps, evaluated once, at the end) at time `now`."""
    records = [
        json.loads(line) for line in (out / "warmup" / "metrics.jsonl").read_text().splitlines() if line
    ]
    elapsed = {r["step"]: r["elapsed_s"] for r in records}
    rate = 20 / (elapsed[30] - elapsed[10])  # steps 11-30: past the first steps' one-time costs
    full_eval = max(0.0, elapsed[40] - elapsed[30] - 10 / rate)
    summary = json.loads((out / "warmup" / "summary.json").read_text())
    overhead = now - warm_start - summary["train_seconds"]
    left = limit_min * 60 - (now - started) - reserve
    return {"limit_minutes": limit_min} | plan(rate, full_eval, overhead, left, evals, seeds, fixed_steps)


def main(argv: list[str], now: float | None = None) -> int:
    """OUT LIMIT_MIN STARTED WARM_START RESERVE_S EVALS SEEDS [FIXED_STEPS]: write and print the plan;
    1 when it leaves no time for one evaluation interval per run (unless FIXED_STEPS gives the steps)."""
    out, limit_min, started, warm_start, reserve, evals, seeds, *fixed = argv
    fixed_steps = int(fixed[0]) if fixed and fixed[0] else None
    p = from_warmup(
        Path(out),
        float(limit_min),
        float(started),
        float(warm_start),
        float(reserve),
        int(evals),
        int(seeds),
        time.time() if now is None else now,
        fixed_steps,
    )
    (Path(out) / "plan.json").write_text(json.dumps(p, indent=1) + "\n")
    print(json.dumps(p))
    if fixed_steps is None and int(p["train_steps"]) < int(evals):
        print(
            f"the limit of {limit_min} minutes leaves no time to train four runs at this speed",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
