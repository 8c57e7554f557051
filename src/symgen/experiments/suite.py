"""Suites of experiments: train every run (skipping finished ones), analyse, write the report.

An experiment names its runs per suite (smoke | quick | mid | paper: the same recipes with
other numbers) and turns finished run directories into a report section with figures, tables and
claims (`symgen.experiments.types`). Runs of all selected experiments are trained first — side by
side with `--jobs N`, or as cluster jobs with `--executor` (`symgen.experiments.executors`) — then
each experiment analyses its own, in this process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path

import click
import yaml

from symgen.analysis.plots import stamped
from symgen.config import ExperimentConfig, resolve
from symgen.errors import UserError, writable_dir
from symgen.experiments.claims import Claim, ClaimResult, merge_seeds
from symgen.experiments.cost import as_header, run_costs, time_section
from symgen.experiments.executors import JobExecutor, train_here
from symgen.experiments.provenance import stamp
from symgen.experiments.registry import default_claims, select
from symgen.experiments.report import write_claims, write_report
from symgen.experiments.seeds import combine_sections
from symgen.experiments.types import Experiment, RunSpec, Section
from symgen.training.run_dir import EXTENDABLE, check_resumable, extension, reopen, seed_dir


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
    # --resume only where the run was started: on a fresh run it would say there is nothing to resume
    cmd += ["--out", str(run_dir), *(["--resume"] if run_dir.exists() else []), "--no-progress"]
    log = run_root / f"{run.name}.log"
    with open(log, "w") as f:
        done = subprocess.run(
            cmd, stdout=f, stderr=subprocess.STDOUT, env=os.environ | {"OMP_NUM_THREADS": "1"}
        )
    if done.returncode != 0:
        raise UserError(f"run {run.name} failed (exit {done.returncode}); see {log}")


def needs(run: RunSpec) -> list[str]:
    """The runs that must finish before this one: those it starts from, and the one it extends."""
    return [*run.after, *([run.extends] if run.extends else [])]


def start_extension(run: RunSpec, source: RunSpec, run_root: Path) -> None:
    """Give an `extends` run the finished source run's directory (every seed), reopened under the
    run's own config, so training goes on from the source's last checkpoint; nothing is done when
    the run has a directory already (it was started before)."""
    target = run_root / run.name
    if target.exists():
        return
    if not source.finished(run_root):
        raise UserError(f"run {run.name} extends {source.name}, which has not finished in {run_root}")
    cfg = resolve(run.recipe, run.resolved_overrides(run_root))
    staging = run_root / f".{run.name}.copy"
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(run_root / source.name, staging)
    copies = [seed_dir(staging, s) for s in run.seeds] if run.seeds else [staging]
    for seed, run_dir in zip(run.seeds or (None,), copies, strict=True):
        seed_cfg = cfg if seed is None else replace(cfg, seed=seed)
        if not extension(seed_cfg, run_dir):
            shutil.rmtree(staging)
            raise UserError(
                f"run {run.name} extends {source.name} but differs from it in more than "
                f"{', '.join(EXTENDABLE)}, or shrinks them"
            )
        click.echo(reopen(seed_cfg, run_dir, source.name).replace(str(staging), str(target)), err=True)
    staging.rename(target)


def _dependency_order(runs: list[RunSpec]) -> list[RunSpec]:
    """Runs ordered so that each comes after the runs it needs (stable otherwise)."""
    by_name, ordered, seen = {r.name: r for r in runs}, [], set()

    def visit(run: RunSpec, stack: tuple[str, ...]) -> None:
        if run.name in seen:
            return
        if run.name in stack:
            raise UserError(f"runs depend on each other in a cycle: {' -> '.join((*stack, run.name))}")
        for dep in needs(run):
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


def train_all(
    runs: list[RunSpec], run_root: Path, jobs: int, progress: bool, executor: JobExecutor | None = None
) -> None:
    done = {r.name for r in runs if r.finished(run_root)}
    for r in runs:  # refuse bad recipes, and finished runs of another config, before any training starts
        cfg = resolve(r.recipe, r.resolved_overrides(run_root))
        if r.name in done:
            _refuse_stale(r, cfg, run_root)
    todo = _dependency_order([r for r in runs if r.name not in done])
    by_name = {r.name: r for r in runs}
    click.echo(
        f"{len(runs) - len(todo)} of {len(runs)} runs finished already; training {len(todo)}", err=True
    )
    run_root.mkdir(parents=True, exist_ok=True)
    if executor is not None:
        executor.train(todo, run_root, needs, lambda r: _extend(r, by_name, run_root))
        return
    if jobs <= 1:
        for i, r in enumerate(todo, 1):
            click.echo(f"[{i}/{len(todo)}] {r.name}", err=True)
            _extend(r, by_name, run_root)
            train_here(r, run_root, progress)
        return
    _train_in_parallel(todo, by_name, run_root, jobs)


def _extend(run: RunSpec, by_name: dict[str, RunSpec], run_root: Path) -> None:
    if run.extends:
        start_extension(run, by_name[run.extends], run_root)


def _start(run: RunSpec, by_name: dict[str, RunSpec], run_root: Path) -> None:
    _extend(run, by_name, run_root)
    _train_in_subprocess(run, run_root)


def _train_in_parallel(todo: list[RunSpec], by_name: dict[str, RunSpec], run_root: Path, jobs: int) -> None:
    """Up to `jobs` runs at a time, each started only once the runs it needs have finished: a worker
    never sits waiting on a dependency while another run could train. A failed run stops the suite:
    the runs already training finish, no other starts."""
    pending, running, finished = list(todo), {}, set()
    in_todo = {r.name for r in todo}

    def ready(run: RunSpec) -> bool:
        return all(dep not in in_todo or dep in finished for dep in needs(run))

    with ThreadPoolExecutor(jobs) as pool:
        while pending or running:
            while len(running) < jobs and (run := next((r for r in pending if ready(r)), None)):
                pending.remove(run)
                running[pool.submit(_start, run, by_name, run_root)] = run.name
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                name = running.pop(future)
                future.result()
                finished.add(name)
                click.echo(f"[{len(finished)}/{len(todo)}] {name} finished", err=True)


@dataclass(frozen=True)
class Selection:
    """What one invocation changes in the runs of the experiments it asks for: `--runs` (only these
    runs are trained and analysed; empty: all) and `--set` (overrides applied to every run, after
    its runs.yaml overrides)."""

    runs: tuple[str, ...] = ()
    sets: tuple[str, ...] = ()

    def apply(self, runs: list[RunSpec]) -> list[RunSpec]:
        chosen = [r for r in runs if not self.runs or r.name in self.runs]
        return [r.with_sets(self.sets) for r in chosen]

    def check(self, suite: str, experiments: list[Experiment]) -> None:
        """Refuse an override that is no KEY=VALUE, a run name no chosen experiment has, and a run
        whose prerequisite run (`after`, `extends`) is left out."""
        for item in self.sets:
            if "=" not in item or not item.split("=", 1)[0].strip():
                raise UserError(f"--set {item!r}: expected KEY=VALUE, e.g. train.steps=300")
        if not self.runs:
            return
        specs = {r.name: r for exp in experiments for r in exp.runs(suite)}
        unknown = [n for n in self.runs if n not in specs]
        if unknown:
            raise UserError(f"--runs {unknown[0]!r}: runs of the chosen experiments are {', '.join(specs)}")
        for name in self.runs:
            missing = [dep for dep in needs(specs[name]) if dep not in self.runs]
            if missing:
                raise UserError(f"--runs: run {name} starts from run {missing[0]}; name it too")

    def header(self) -> dict[str, list[str]]:
        """What claims.json's header records of the selection (nothing when there is none)."""
        return ({"set": list(self.sets)} if self.sets else {}) | (
            {"runs": list(self.runs)} if self.runs else {}
        )


DEFAULT_SEEDS = {"smoke": 1, "quick": 1, "mid": 1, "paper": 3}


def seeded(runs: list[RunSpec], seeds: tuple[int, ...]) -> list[RunSpec]:
    """Every run at `seeds` (those `--seeds` names: 0-2, 3,5), trained as one stacked model, except runs that
    choose their own seeds (a seed list, or a `seed=` override), which stay as they are. A run that
    starts from another (`after`, a fine-tune) starts each seed from the same seed of that run."""
    if seeds == (0,):
        return runs
    out = []
    for run in runs:
        own = run.seeds or any(o.startswith("seed=") for o in run.overrides)
        out.append(run if own else replace(run, seeds=seeds, suite_seeds=True))
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


def relative_evidence(items: list[str], out: Path, figure_dir: Path) -> list[str]:
    """Evidence as paths inside OUT: run directories as runs/NAME[/seed-N], figures under figures/.
    OUT may be relative (`--out smoke`): a run directory the analysis names as `smoke/runs/NAME` is
    `runs/NAME` all the same, so that the report's links read from the report's own folder."""
    rel, root = [], out.resolve()
    for item in items:
        path = Path(item).resolve() if "/" in item else None
        if path is not None and path.is_relative_to(root):
            rel.append(path.relative_to(root).as_posix())
        elif item.endswith(".png") and "/" not in item:
            rel.append((figure_dir / item).resolve().relative_to(root).as_posix())
        else:
            rel.append(item)
    return rel


def seed_label(seed: int | None, run_dirs: dict[str, Path]) -> str:
    """The seed an analysis reads, for its figures' titles: the suite's (`--seeds`), else the seed its
    runs' config.yaml record ('seeds 0, 1' when they differ; '' when no run records one)."""
    if seed is not None:
        return f"seed {seed}"
    seeds = set()
    for run_dir in run_dirs.values():
        config = run_dir / "config.yaml"
        if config.is_file():
            recorded = (yaml.safe_load(config.read_text()) or {}).get("seed")
            if isinstance(recorded, int):
                seeds.add(recorded)
    if not seeds:
        return ""
    return f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, sorted(seeds)))}"


def analyze_experiment(
    exp: Experiment, suite: str, runs: list[RunSpec], out: Path, left_out: tuple[str, ...] = ()
) -> tuple[Section, dict[str, ClaimResult]]:
    """One experiment analysed at every seed of the suite: its section (tables merged over seeds) and
    its claims, each merged over the seeds part by part. `left_out` names its runs that `--runs` did
    not train: an analysis that cannot do without one reports that, instead of failing the suite."""
    by_seed: dict[str, dict[int, Claim]] = {}
    seed_sections: dict[int, Section] = {}
    for seed, run_dirs in seed_views(runs, out / "runs").items():
        where = out / "figures" if seed in (None, 0) else out / "figures" / f"seed-{seed}"
        try:
            label = seed_label(seed, run_dirs)
            with stamped(f"{exp.name}, {label}" if label else exp.name):
                section = exp.analyze(suite, run_dirs, where)
        except (KeyError, FileNotFoundError) as e:
            if not left_out:
                raise
            why = f"{type(e).__name__}: {e}"
            text = (
                f"Not analysed: its analysis needs runs that --runs left out ({', '.join(left_out)}; {why})."
            )
            return Section(exp.title, [text]), {}
        for claim in section.claims:
            claim.evidence = relative_evidence(claim.evidence, out, where)
            by_seed.setdefault(claim.id, {})[seed or 0] = claim
        seed_sections[seed or 0] = section
    return combine_sections(seed_sections), {cid: merge_seeds(c) for cid, c in by_seed.items()}


def done_here(runs: list[RunSpec], run_root: Path) -> bool:
    """An experiment not asked for is reported when it has runs and they all finished in this output
    (one without runs, such as theory, only when asked: it would measure anew every time)."""
    return bool(runs) and all(r.finished(run_root) for r in runs)


def run_suite(
    suite: str,
    out: Path,
    only: str | None = None,
    jobs: int = 1,
    progress: bool = True,
    seeds: int | tuple[int, ...] | None = None,
    command: str = "",
    selection: Selection = Selection(),
    executor: JobExecutor | None = None,
) -> Path:
    started = time.time()
    chosen = select(suite, only)  # refuses an unknown suite first
    selection.check(suite, chosen)
    seeds = DEFAULT_SEEDS[suite] if seeds is None else seeds
    if isinstance(seeds, int):
        if seeds < 1:
            raise UserError(f"--seeds {seeds}: at least 1")
        seeds = tuple(range(seeds))
    writable_dir(out)
    run_root, figure_dir = out / "runs", out / "figures"
    # with --runs, an asked experiment none of whose runs is named is left out (one without runs stays)
    asked = {
        e.name for e in chosen if not selection.runs or selection.apply(e.runs(suite)) or not e.runs(suite)
    }

    def runs_of(exp: Experiment) -> list[RunSpec]:
        """An asked experiment's runs as this invocation trains them; another's as its runs.yaml has them."""
        return seeded(selection.apply(exp.runs(suite)) if exp.name in asked else exp.runs(suite), seeds)

    # experiments may analyse each other's runs: a run named twice is trained once
    all_runs = list({r.name: r for exp in chosen if exp.name in asked for r in runs_of(exp)}.values())
    train_all(all_runs, run_root, jobs, progress, executor)
    figure_dir.mkdir(parents=True, exist_ok=True)

    # the report also covers the suite's other experiments whose runs all finished here before
    reported = [
        exp
        for exp in select(suite, None)
        if exp.name in asked or (exp.report_unasked and done_here(runs_of(exp), run_root))
    ]
    all_runs = list({r.name: r for exp in reported for r in runs_of(exp)}.values())
    claims = default_claims()
    sections = []
    for exp in reported:
        if exp.name in asked:  # its runs trained under --set: so would the ones --runs left out
            exp.invocation_sets = selection.sets
        trained = {r.name for r in runs_of(exp)}
        left_out = tuple(r.name for r in exp.runs(suite) if r.name not in trained)
        section, judged = analyze_experiment(exp, suite, runs_of(exp), out, left_out)
        sections.append(section)
        claims |= judged
    costs = run_costs(all_runs, run_root)
    if costs:
        sections.append(time_section(costs))
    timing = {
        "wall_seconds": round(time.time() - started, 1),
        "train_seconds_of_runs": round(sum(c.seconds for c in costs), 1),
        "runs": as_header(costs),
    }
    header = stamp(
        command,
        suite=suite,
        seeds=list(seeds),
        experiments=[exp.name for exp in reported],
        timing=timing,
        **selection.header(),
    )
    write_claims(out / "claims.json", header, list(claims.values()))
    return write_report(out / "report.html", header, sections, list(claims.values()))


def list_plan(suite: str, only: str | None, selection: Selection = Selection()) -> str:
    """The suite's experiments and runs (name, recipe, overrides) as this invocation would train them."""
    chosen = select(suite, only)
    selection.check(suite, chosen)
    lines = []
    for exp in chosen:
        runs = selection.apply(exp.runs(suite))
        if selection.runs and not runs and exp.runs(suite):
            continue
        lines.append(f"{exp.name}\t{exp.title}")
        lines += [f"  {run.name}\t{run.recipe} {' '.join(run.overrides)}".rstrip() for run in runs]
    return "\n".join(lines)
