"""symgen's one entry point. Errors a user can cause print one line and exit 2, with no traceback."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import click

from symgen.errors import UserError


def _no_hint() -> str:
    return ""


def _rerun_hint() -> str:
    return (
        "running the same command again continues: finished runs are kept, and an unfinished one goes "
        "on from its last checkpoint"
    )


# what the running command says after "symgen: interrupted" (Ctrl-C): how to continue its work
interrupt_hint: Callable[[], str] = _no_hint


def _resume_hint(run_dirs: list[Path]) -> Callable[[], str]:
    def hint() -> str:
        from symgen.training.checkpoint import list_checkpoints

        last = min((list_checkpoints(d / "checkpoints") or [0])[-1] for d in run_dirs)
        where = f"step {last}" if last else "none written yet: step 0"
        return f"the same command with --resume continues from the last checkpoint ({where})"

    return hint


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def app() -> None:
    """Study and fix how transformers generalize in symbolic reasoning."""


@app.command()
def recipes() -> None:
    """List the built-in recipes, one name at the start of each line."""
    from symgen.config import load_recipe, recipe_names

    for name in recipe_names():
        description = load_recipe(name).get("description", "")
        click.echo(f"{name}\t{description}" if description else name)


@app.command()
@click.argument("recipe")
@click.argument("overrides", nargs=-1)
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Run directory.")
@click.option("--resume", is_flag=True, help="Continue an interrupted run exactly.")
@click.option("--progress/--no-progress", default=True, help="Show a progress bar.")
@click.option(
    "--seeds",
    default=None,
    help="Seeds trained together as one stacked model, one run per seed in OUT/seed-N: a list or a "
    "range (0,1,2 or 0-2).",
)
def train(
    recipe: str, overrides: tuple[str, ...], out: Path, resume: bool, progress: bool, seeds: str | None
) -> None:
    """Train one run: RECIPE is a YAML file or a built-in recipe name (`symgen recipes`);
    OVERRIDES are key=value pairs with dotted paths, e.g. train.steps=300 model.d_model=64 seed=3.

    With --seeds 0,1,2,3 the seeds train side by side in one process as one stacked model (batched
    matmuls; each seed keeps its own data, optimizer, interventions and curriculum); each seed's
    run directory OUT/seed-N is an ordinary run. Under `torchrun --nproc_per_node N` one run trains
    data-parallel."""
    from symgen.cli.seeds import parse_seeds, refuse_seed_override
    from symgen.config import resolve
    from symgen.training.run import train_run
    from symgen.training.run_dir import refuse_foreign_folder, seed_dir
    from symgen.training.stacked import train_seeds

    global interrupt_hint
    if seeds is not None:
        refuse_seed_override(overrides, seeds)
    cfg = resolve(recipe, list(overrides))
    if int(os.environ.get("RANK", "0")) == 0:  # other ranks may find rank 0's first files there
        refuse_foreign_folder(out, stacked=seeds is not None)
    interrupt_hint = _resume_hint([out])
    if seeds is not None:
        seed_list = parse_seeds(seeds)
        interrupt_hint = _resume_hint([seed_dir(out, seed) for seed in seed_list])
        summaries = train_seeds(cfg, seed_list, out, resume, progress, say_fresh=True)
        for seed, summary in zip(seed_list, summaries, strict=True):
            _report_done(seed_dir(out, seed), summary)
        return
    summary = train_run(cfg, out, resume=resume, progress=progress, say_fresh=True)
    if int(os.environ.get("RANK", "0")) != 0:
        return
    _report_done(out, summary)


def _report_done(out: Path, summary: dict) -> None:
    if summary.get("skipped"):
        click.echo(f"{out} is finished already; nothing to do")
    else:
        final = ", ".join(f"{k}={v:.4f}" for k, v in summary["final"].items())
        click.echo(f"done ({out}): {summary['steps']} steps in {summary['train_seconds']:.1f}s; {final}")


# the suites of symgen.experiments.types.SUITES (not imported here: `symgen --help` stays fast)
SUITES = ("smoke", "quick", "mid", "paper")


@app.command()
@click.option(
    "--suite",
    type=click.Choice(SUITES),
    required=True,
    help="smoke (minutes, checks the plumbing) | quick (about 6 h 35 min on 2 CPU cores) | mid (Part A at "
    "d = 128, about 3 h on 2 CPU cores) | paper (a GPU).",
)
@click.option("--out", type=click.Path(path_type=Path), default=Path("repro"), show_default=True)
@click.option("--only", default=None, help="Comma-separated experiment names to run.")
@click.option("--list", "list_", is_flag=True, help="List the suite's experiments and runs; run nothing.")
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Runs trained side by side (one thread each when > 1; default 1); each starts once the runs it "
    "needs are done. With --executor submitit-local or slurm: the most jobs in flight at once (default: "
    "submitit-local one per CPU core, slurm no limit).",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "submitit-local", "slurm"]),
    default="local",
    show_default=True,
    help="Where runs train: local (this process, or --jobs subprocesses) | slurm (one Slurm job per run, "
    "through submitit) | submitit-local (the same jobs on this machine); both need submitit: "
    "pip install -e '.[cluster]'.",
)
@click.option(
    "--executor-config",
    type=click.Path(path_type=Path),
    default=None,
    help="YAML of each run's job: partition, gpus, cpus, mem_gb, time_min, sbatch (more #SBATCH options).",
)
@click.option("--progress/--no-progress", default=True, help="Show progress bars.")
@click.option(
    "--seeds",
    default=None,
    help="The seeds every run trains (stacked in one process, OUT/runs/RUN/seed-N): a list or a range, "
    "e.g. 4,5,6 or 0-2 (a bare number is refused: it is no count); default: seed 0 (paper: 0-2).",
)
@click.option("--runs", "run_names", default=None, help="Comma-separated runs: train and analyse only these.")
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="KEY=VALUE",
    help="An override for every run of this invocation, after its runs.yaml ones (repeatable).",
)
def reproduce(
    suite: str,
    out: Path,
    only: str | None,
    list_: bool,
    jobs: int | None,
    executor: str,
    executor_config: Path | None,
    progress: bool,
    seeds: str | None,
    run_names: str | None,
    sets: tuple[str, ...],
) -> None:
    """Run a suite's experiments (skipping finished runs); write OUT/report.html and OUT/claims.json.

    With --seeds 0-2 every run trains at those seeds, every experiment is analysed per seed, and each
    claim's verdict holds only if it holds in every seed (`partly reproduced` names the others).
    --runs and --set change this invocation only (a shorter run on a lent GPU, say); claims.json's
    header and the report record them, and an analysis missing a run left out judges without it.

    With --executor slurm every run is one Slurm job (logs in OUT/runs/RUN.jobs/); a run that needs
    another is submitted once that one has finished; this process waits, then analyses and reports.
    A job stopped by a time limit or preemption is requeued and resumes from its last checkpoint;
    running the same command again continues whatever did not finish."""
    from symgen.cli.seeds import refuse_set_seed, seed_plan, suite_seeds
    from symgen.experiments.executors import job_executor
    from symgen.experiments.provenance import command_line
    from symgen.experiments.registry import list_suite
    from symgen.experiments.suite import Selection, list_plan, run_suite

    names = tuple(n.strip() for n in (run_names or "").split(",") if n.strip())
    selection = Selection(runs=names, sets=tuple(sets))
    seed_list = suite_seeds(seeds)
    refuse_set_seed(sets)
    global interrupt_hint
    if list_:
        click.echo(list_plan(suite, only, selection) if names or sets else list_suite(suite, only))
        click.echo(seed_plan(suite, only, selection, seed_list))
        return
    cluster = job_executor(executor, executor_config, jobs)
    interrupt_hint = _rerun_hint
    report = run_suite(
        suite,
        out,
        only=only,
        jobs=jobs or 1,
        progress=progress,
        seeds=seed_list,
        command=command_line(out, [executor_config] if executor_config else []),
        selection=selection,
        executor=cluster,
    )
    click.echo(f"report: {report}")
    _note_dirty(out)


@app.command()
@click.argument("outputs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), help="Folder of the book.")
@click.option(
    "--check",
    "check",
    type=click.Path(path_type=Path),
    help="Re-derive the book in this folder from its committed files; exit 1 on any difference.",
)
def report(outputs: tuple[Path, ...], out: Path | None, check: Path | None) -> None:
    """Merge finished `reproduce` outputs (parts run separately, any seeds) into one book: OUT/report.html
    and OUT/claims.json with every claim once, judged by the output that measured it, and each output
    copied into OUT/NAME with the files its report links to. `--check BOOK` instead chooses every
    claim anew from the book's parts, and analyses anew each part whose runs' files it holds, and
    names each difference from what the book and its parts record (exit 1 if any)."""
    from symgen.experiments.book import merge
    from symgen.experiments.provenance import command_line

    if check is not None:
        if outputs or out is not None:
            raise UserError("report --check BOOK takes no outputs and no --out: it reads the book alone")
        from symgen.experiments.book_check import check_book

        result = check_book(check)
        for line in result.lines():
            click.echo(line)
        total = len(result.rederived) + len(result.not_rederivable)
        click.echo(
            f"report --check {check}: {len(result.differences)} differences; "
            f"{len(result.rederived)} of {total} parts re-analysed from their runs"
        )
        if result.differences:
            raise SystemExit(1)
        return
    if not outputs or out is None:
        raise UserError("report: give the reproduce outputs to merge and --out BOOK (or --check BOOK)")

    book = out.resolve()
    for output in outputs:
        where = output.resolve()
        if book == where or book.is_relative_to(where) or where.is_relative_to(book):
            how = "is" if book == where else "sits inside" if book.is_relative_to(where) else "holds"
            raise UserError(
                f"report --out {out} {how} the merged output {output}: the book would write over it; "
                "choose a folder apart from every output"
            )
    click.echo(f"report: {merge(list(outputs), out, command_line(out, outputs))}")
    _note_dirty(out)


def _note_dirty(out: Path) -> None:
    """One line on stderr when the output records a `-dirty` commit (its own or a part's)."""
    from symgen.experiments.book import recorded_commits
    from symgen.experiments.provenance import dirty_note

    note = dirty_note(recorded_commits(out))
    if note:
        click.echo(note, err=True)


@app.command()
@click.option("--sizes", default="horn-quick,kg-quick,d256", show_default=True, help="Comma-separated.")
@click.option("--rounds", default=5, show_default=True, help="Interleaved rounds (median, min, max).")
@click.option("--steps", default=4, show_default=True, help="Timed steps per side per round.")
@click.option("--stack", default="1,4,16", show_default=True, help="Stacked seed counts ('': none).")
@click.option("--threads", default=1, show_default=True, help="torch CPU threads.")
@click.option("--device", default="cpu", show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Also write the JSON here.")
def bench(
    sizes: str, rounds: int, steps: int, stack: str, threads: int, device: str, out: Path | None
) -> None:
    """Training steps/s at the recipes' sizes: symgen against looped GPT2Blocks and plain PyTorch,
    and the per-seed throughput of stacked seeds."""
    import json

    import torch

    from symgen.cli.seeds import parse_seeds
    from symgen.experiments.speed.bench import benchmark

    if threads < 1:
        raise UserError(f"--threads {threads}: must be >= 1")
    torch.set_num_threads(threads)
    counts = parse_seeds(stack, "--stack", "1,4,16", least=1) if stack.strip() else []
    names = [s.strip() for s in sizes.split(",") if s.strip()]
    result = benchmark(names, rounds=rounds, steps=steps, stack=counts, device=device)
    text = json.dumps(result, indent=1)
    if out is not None:
        Path(out).write_text(text + "\n")
    click.echo(text)


def _add_groups() -> None:
    from symgen.cli.analyze import analyze
    from symgen.cli.data import data
    from symgen.cli.tokens import tokens

    for group in (data, tokens, analyze):
        app.add_command(group)


_add_groups()


def usage_line(e: click.UsageError) -> str:
    """A usage error as one line: the command, Click's message, and where its help is."""
    message = " ".join(e.format_message().split())  # Click lists choices on lines of their own
    command = e.ctx.command_path if e.ctx is not None else "symgen"
    where = command.removeprefix("symgen").strip()
    return f"{where}: {message} (see '{command} --help')" if where else f"{message} (see '{command} --help')"


def main() -> None:
    try:
        code = app.main(prog_name="symgen", standalone_mode=False)
    except UserError as e:
        print(f"symgen: error: {e}", file=sys.stderr)
        sys.exit(2)
    except (click.exceptions.Abort, KeyboardInterrupt):
        hint = interrupt_hint()
        print("symgen: interrupted" + (f"; {hint}" if hint else ""), file=sys.stderr)
        sys.exit(130)
    except click.exceptions.NoArgsIsHelpError as e:  # `symgen`, `symgen data`: the help is the answer
        e.show()
        sys.exit(e.exit_code)
    except click.UsageError as e:  # Click's own would take 3-5 lines: usage, a hint, a blank, the error
        print(f"symgen: error: {usage_line(e)}", file=sys.stderr)
        sys.exit(2)
    except click.ClickException as e:
        print(f"symgen: error: {' '.join(e.format_message().split())}", file=sys.stderr)
        sys.exit(e.exit_code)
    except OSError as e:  # a path the user gave that cannot be read or written (full disk, permissions)
        print(f"symgen: error: {e.strerror or e}: {e.filename or ''}".rstrip(": "), file=sys.stderr)
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)
