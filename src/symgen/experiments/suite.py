"""Suites of experiments: train every run (skipping finished ones), analyse, write the report.

An experiment names its runs per suite (smoke | quick | paper: the same recipes with other
numbers) and turns finished run directories into a report section with figures, tables and
claims. Runs of all selected experiments are trained first — side by side with `--jobs N` — then
each experiment analyses its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import click

from symgen.config import ExperimentConfig, resolve
from symgen.errors import UserError, writable_dir
from symgen.experiments.claims import Claim, default_claims, merge_seeds
from symgen.training.run import train_run
from symgen.training.run_dir import check_resumable, is_finished, read_summary, seed_dir
from symgen.training.stacked import train_seeds

SUITES = ("smoke", "quick", "paper")


@dataclass
class RunSpec:
    """One training run of a suite. Overrides may name `{runs}`, the suite's run directory (a
    fine-tune's `train.init_from={runs}/pretrain`); runs listed in `after` are trained first."""

    name: str  # directory under OUT/runs/, unique in the suite
    recipe: str
    overrides: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    seeds: tuple[int, ...] = ()  # several seeds trained as one stacked model: OUT/runs/NAME/seed-N
    suite_seeds: bool = False  # seeds given by `reproduce --seeds`: the experiment is analysed per seed

    def resolved_overrides(self, run_root: Path) -> list[str]:
        return [o.replace("{runs}", str(run_root)) for o in self.overrides]

    def run_dirs(self, run_root: Path) -> list[Path]:
        """The ordinary run directories this spec trains (one per seed when stacked)."""
        if not self.seeds:
            return [run_root / self.name]
        return [seed_dir(run_root / self.name, s) for s in self.seeds]

    def finished(self, run_root: Path) -> bool:
        return all(is_finished(d) for d in self.run_dirs(run_root))


@dataclass
class Table:
    headers: list[str]
    rows: list[list[object]]
    caption: str = ""


@dataclass
class Section:
    title: str
    paragraphs: list[str] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    figure_notes: dict[str, str] = field(default_factory=dict)  # a caption per figure path (its seed)


class Experiment:
    name = "experiment"
    title = "Experiment"
    suites: tuple[str, ...] = SUITES  # the suites this experiment belongs to
    report_unasked = True  # reported whenever its runs are finished, also when --only leaves it out

    def runs(self, suite: str) -> list[RunSpec]:
        raise NotImplementedError

    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        raise NotImplementedError


def experiments() -> list[Experiment]:
    from symgen.experiments.implicit_horn import ImplicitHornExperiment
    from symgen.experiments.kg_depth import KGDepthExperiment
    from symgen.experiments.kg_inside import KGInsideExperiment
    from symgen.experiments.kg_systematic import KGSystematicExperiment
    from symgen.experiments.reverse import ReverseExperiment
    from symgen.experiments.speed import SpeedExperiment
    from symgen.experiments.theory import TheoryExperiment
    from symgen.experiments.transfer import TransferExperiment
    from symgen.experiments.unseen import UnseenSymbolsExperiment
    from symgen.experiments.unseen_ablation import UnseenAblationExperiment

    return [
        ReverseExperiment(),
        UnseenSymbolsExperiment(),
        UnseenAblationExperiment(),
        TheoryExperiment(),
        TransferExperiment(),
        KGSystematicExperiment(),
        KGDepthExperiment(),
        KGInsideExperiment(),
        ImplicitHornExperiment(),
        SpeedExperiment(),
    ]


def select(suite: str, only: str | None) -> list[Experiment]:
    if suite not in SUITES:
        raise UserError(f"--suite {suite!r}: allowed are {', '.join(SUITES)}")
    chosen = [e for e in experiments() if suite in e.suites]
    if only:
        names = [n.strip() for n in only.split(",") if n.strip()]
        known = {e.name for e in chosen}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise UserError(
                f"--only {unknown[0]!r}: experiments of suite {suite} are {', '.join(sorted(known))}"
            )
        chosen = [e for e in chosen if e.name in names]
    return chosen


def list_suite(suite: str, only: str | None) -> str:
    lines = []
    for exp in select(suite, only):
        lines.append(f"{exp.name}\t{exp.title}")
        for run in exp.runs(suite):
            lines.append(f"  {run.name}\t{run.recipe} {' '.join(run.overrides)}".rstrip())
    return "\n".join(lines)


def _train_in_subprocess(run: RunSpec, run_root: Path) -> None:
    run_dir = run_root / run.name
    cmd = [
        sys.executable,
        "-m",
        "symgen",
        "train",
        run.recipe,
        *run.resolved_overrides(run_root),
        "train.threads=1",
    ]
    if run.seeds:
        cmd += ["--seeds", ",".join(map(str, run.seeds))]
    cmd += ["--out", str(run_dir), "--resume", "--no-progress"]
    log = run_root / f"{run.name}.log"
    with open(log, "w") as f:
        done = subprocess.run(
            cmd, stdout=f, stderr=subprocess.STDOUT, env=os.environ | {"OMP_NUM_THREADS": "1"}
        )
    if done.returncode != 0:
        raise UserError(f"run {run.name} failed (exit {done.returncode}); see {log}")


def _dependency_order(runs: list[RunSpec]) -> list[RunSpec]:
    """Runs ordered so that each comes after the runs it needs (stable otherwise)."""
    by_name, ordered, seen = {r.name: r for r in runs}, [], set()

    def visit(run: RunSpec, stack: tuple[str, ...]) -> None:
        if run.name in seen:
            return
        if run.name in stack:
            raise UserError(f"runs depend on each other in a cycle: {' -> '.join((*stack, run.name))}")
        for dep in run.after:
            if dep in by_name:
                visit(by_name[dep], (*stack, run.name))
        seen.add(run.name)
        ordered.append(run)

    for run in runs:
        visit(run, ())
    return ordered


def _refuse_stale(run: RunSpec, cfg: ExperimentConfig, run_root: Path) -> None:
    """A finished run is reused only if it is the run the suite asks for now: a recipe changed since
    (another setting, a new default) would otherwise enter the report under its old numbers."""
    for seed, run_dir in zip(run.seeds or (None,), run.run_dirs(run_root), strict=True):
        check_resumable(cfg if seed is None else replace(cfg, seed=seed), run_dir)


def train_all(runs: list[RunSpec], run_root: Path, jobs: int, progress: bool) -> None:
    done = {r.name for r in runs if r.finished(run_root)}
    for r in runs:  # refuse bad recipes, and finished runs of another config, before any training starts
        cfg = resolve(r.recipe, r.resolved_overrides(run_root))
        if r.name in done:
            _refuse_stale(r, cfg, run_root)
    todo = _dependency_order([r for r in runs if r.name not in done])
    click.echo(
        f"{len(runs) - len(todo)} of {len(runs)} runs finished already; training {len(todo)}", err=True
    )
    run_root.mkdir(parents=True, exist_ok=True)
    if jobs <= 1:
        for i, r in enumerate(todo, 1):
            click.echo(f"[{i}/{len(todo)}] {r.name}", err=True)
            cfg = resolve(r.recipe, r.resolved_overrides(run_root))
            if r.seeds:
                train_seeds(cfg, list(r.seeds), run_root / r.name, resume=True, progress=progress)
            else:
                train_run(cfg, run_root / r.name, resume=True, progress=progress)
        return
    futures: dict[str, Future] = {}

    def after_dependencies(run: RunSpec) -> None:
        for dep in run.after:
            if dep in futures:
                futures[dep].result()
        _train_in_subprocess(run, run_root)

    # dependencies are submitted before their dependents, so a waiting worker never blocks them
    with ThreadPoolExecutor(jobs) as pool:
        for r in todo:
            futures[r.name] = pool.submit(after_dependencies, r)
        for i, (name, future) in enumerate(futures.items(), 1):
            future.result()
            click.echo(f"[{i}/{len(todo)}] {name} finished", err=True)


DEFAULT_SEEDS = {"smoke": 1, "quick": 1, "paper": 3}


def seeded(runs: list[RunSpec], n_seeds: int) -> list[RunSpec]:
    """Every run at seeds 0..n_seeds-1, trained as one stacked model, except runs that choose their
    own seeds (a seed list, or a `seed=` override) and runs that start from another run (`after`:
    a fine-tune of one pretrained model), which stay as they are."""
    if n_seeds <= 1:
        return runs
    out = []
    for run in runs:
        own = run.seeds or run.after or any(o.startswith("seed=") for o in run.overrides)
        out.append(run if own else replace(run, seeds=tuple(range(n_seeds)), suite_seeds=True))
    return out


def seed_views(runs: list[RunSpec], run_root: Path) -> dict[int, dict[str, Path]]:
    """Per seed of the suite, the run directory each spec offers the experiment's analysis."""
    suite_seeds = sorted({s for r in runs if r.suite_seeds for s in r.seeds}) or [None]
    views = {}
    for seed in suite_seeds:
        views[seed] = {
            r.name: seed_dir(run_root / r.name, seed) if r.suite_seeds else run_root / r.name for r in runs
        }
    return views


def run_suite(
    suite: str,
    out: Path,
    only: str | None = None,
    jobs: int = 1,
    progress: bool = True,
    seeds: int | None = None,
) -> Path:
    from symgen.experiments.report import write_report
    from symgen.experiments.seeds import combine_sections

    started = time.time()
    chosen = select(suite, only)  # refuses an unknown suite first
    n_seeds = DEFAULT_SEEDS[suite] if seeds is None else seeds
    if n_seeds < 1:
        raise UserError(f"--seeds {n_seeds}: at least 1")
    writable_dir(out)
    run_root, figure_dir = out / "runs", out / "figures"

    def runs_of(exp: Experiment) -> list[RunSpec]:
        return seeded(exp.runs(suite), n_seeds)

    # experiments may analyse each other's runs: a run named twice is trained once
    all_runs = list({r.name: r for exp in chosen for r in runs_of(exp)}.values())
    train_all(all_runs, run_root, jobs, progress)
    figure_dir.mkdir(parents=True, exist_ok=True)

    # the report also covers the suite's other experiments whose runs all finished here before
    names = {exp.name for exp in chosen}
    reported = [
        exp
        for exp in select(suite, None)
        if exp.name in names or (exp.report_unasked and all(r.finished(run_root) for r in runs_of(exp)))
    ]
    all_runs = list({r.name: r for exp in reported for r in runs_of(exp)}.values())
    claims = default_claims()
    sections = []
    for exp in reported:
        by_seed: dict[str, dict[int, Claim]] = {}
        seed_sections: dict[int, Section] = {}
        for seed, run_dirs in seed_views(runs_of(exp), run_root).items():
            where = figure_dir if seed in (None, 0) else figure_dir / f"seed-{seed}"
            section = exp.analyze(suite, run_dirs, where)
            for claim in section.claims:
                by_seed.setdefault(claim.id, {})[seed or 0] = claim
            seed_sections[seed or 0] = section
        sections.append(combine_sections(seed_sections))  # tables: mean [min–max] over the seeds
        for cid, per_seed in by_seed.items():
            claims[cid] = merge_seeds(per_seed)
    train_seconds = sum(read_summary(d)["train_seconds"] for r in all_runs for d in r.run_dirs(run_root))
    timing = {
        "wall_seconds": round(time.time() - started, 1),
        "train_seconds_of_runs": round(train_seconds, 1),
    }
    (out / "claims.json").write_text(json.dumps([c.to_dict() for c in claims.values()], indent=1) + "\n")
    return write_report(out / "report.html", suite, sections, list(claims.values()), timing)
