"""`symgen analyze`: look inside a trained run (figures and JSON under RUN_DIR/analysis/)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

RUN_DIR = click.argument("run_dir", type=click.Path(path_type=Path))
MAX_ITERS_HELP = (
    "Inference iterations r = 1..N (default: {kg} for a knowledge-graph run; for an implicit-Horn run "
    "3 × its R or its evaluation grid's largest r, whichever is more)."
)


@click.group()
def analyze() -> None:
    """Analyses of trained runs: iterations, margins (looped KG and implicit-Horn models), halting, lens
    (looped KG models); theory."""


def _implicit(run_dir: Path) -> bool:
    from symgen.analysis.implicit_iterations import is_implicit_run

    return is_implicit_run(run_dir)


def _at(curve: list[float], r: int) -> str:
    return f"{curve[r - 1]:.2f}" if r <= len(curve) else "—"


def _echo_implicit(result: dict, lines: Callable[[dict, int, int], str]) -> None:
    """One line per scenario and depth (`lines(curves, own_r, last_r)` writes it), then the figures."""
    own, last = result["own_r"], result["max_iters"]
    click.echo(f"{result['run']}: R = {result['train_loops']} (plain read-out at r = {own}), r = 1..{last}")
    for scenario, by_depth in result["scenarios"].items():
        for depth, curves in by_depth.items():
            click.echo(f"{scenario} depth {depth}: {lines(curves, own, last)}")
    for figure in result["figures"]:
        click.echo(f"figure: {figure}")


def _implicit_accuracy(c: dict, own: int, last: int) -> str:
    best = max(range(len(c["accuracy"])), key=lambda i: c["accuracy"][i]) + 1
    return (
        f"accuracy {_at(c['accuracy'], own)} at r = {own}, {_at(c['accuracy'], last)} at r = {last}, "
        f"best {_at(c['accuracy'], best)} at r = {best}"
    )


def _implicit_margin(c: dict, own: int, last: int) -> str:
    """Margin, ‖Δh‖ into that iteration, head-label accuracy: at the plain read-out's R, and at the last r."""
    text = (
        f"margin {_at(c['margin'], own)} at r = {own}, {_at(c['margin'], last)} at r = {last}; "
        f"‖Δh‖ {_at([0.0, *c['delta_h']], own)} → {_at([0.0, *c['delta_h']], last)}"
    )
    if c["head_accuracy"] is not None:
        text += f"; head labels {_at(c['head_accuracy'], own)} → {_at(c['head_accuracy'], last)}"
    return text


@analyze.command()
@RUN_DIR
@click.option("--max-iters", type=int, default=None, help=MAX_ITERS_HELP.format(kg=20))
def iterations(run_dir: Path, max_iters: int | None) -> None:
    """Accuracy per hop count (KG: r chosen on half the chains) or per proof depth (implicit Horn)
    against inference iterations (heatmap)."""
    if _implicit(run_dir):
        from symgen.analysis.implicit_iterations import iterations as implicit

        _echo_implicit(implicit(run_dir, max_iters), _implicit_accuracy)
        return
    from symgen.analysis.loop_report import iterations as run

    max_iters = 20 if max_iters is None else max_iters
    result = run(run_dir, max_iters)
    bar, r0, r = result["depth_bar"], result["baseline_r"], result["chosen_r"]
    click.echo(
        f"depth (deepest hop >= {bar:g} on the test half) at training R={result['train_loops']} "
        f"(read at r = {r0}): {result['depth_baseline']}; at r = {r} (chosen on the validation half "
        f"over 1..{max_iters}): {result['depth_chosen_r']}; learnable depth {result['learnable_depth']}"
    )
    click.echo(f"oracle (each hop at its best r on the test half, a diagnostic): {result['depth_oracle_r']}")
    click.echo(f"figure: {result['figure']}")


@analyze.command()
@RUN_DIR
@click.option("--max-iters", type=int, default=None, help=MAX_ITERS_HELP.format(kg=50))
def margins(run_dir: Path, max_iters: int | None) -> None:
    """Mean logit margin per iteration and hop count, peak iteration and t* (KG); per proof depth the
    answer's margin, the hidden state's change per iteration and head-label accuracy (implicit Horn)."""
    if _implicit(run_dir):
        from symgen.analysis.implicit_iterations import margin_curves as implicit

        _echo_implicit(implicit(run_dir, max_iters), _implicit_margin)
        return
    from symgen.analysis.loop_report import margin_curves

    result = margin_curves(run_dir, 50 if max_iters is None else max_iters)
    for name, m in result["groups"].items():
        click.echo(
            f"{name}: peak {m['peak_margin']:.2f} at iteration {m['peak_iteration']}, t* = {m['t_star']}"
        )
    click.echo(f"figure: {result['figure']}")


@analyze.command()
@RUN_DIR
@click.option(
    "--kl-eps", default=0.001, show_default=True, help="KL(p_t || p_t-1) threshold, > 0 (the authors' value)."
)
@click.option("--entropy-max", default=3.0, show_default=True, help="Entropy threshold in nats.")
@click.option("--max-iters", default=16, show_default=True, help="Iterations to run, >= 1.")
def halting(run_dir: Path, kl_eps: float, entropy_max: float, max_iters: int) -> None:
    """Per-example halting (KL + entropy), KL-only and every fixed r: accuracy, iterations, FLOPs saved."""
    from symgen.analysis.loop_report import halting as run

    result = run(run_dir, kl_eps, entropy_max, max_iters)
    for row in result["overall"][:2] + result["overall"][-1:]:
        click.echo(
            f"{row['rule']:>28}: accuracy {row['accuracy']:.3f}, mean iterations "
            f"{row['mean_iterations']:.2f}, FLOPs saved {row['flops_saved']:.1%}"
        )
    click.echo(f"figure: {result['figure']}")


@analyze.command()
@RUN_DIR
@click.option("--n", default=500, show_default=True, help="Queries per set (train, id, ood).")
def lens(run_dir: Path, n: int) -> None:
    """Logit lens after every layer of every iteration, on every kept checkpoint."""
    from symgen.analysis.loop_report import lens as run

    result = run(run_dir, n)
    for name, probes in result["checkpoints"]["final"].items():
        best = {p: max(v for layers in grid for v in layers) for p, grid in probes.items()}
        click.echo(f"{name}: " + ", ".join(f"{p} up to {v:.2f}" for p, v in best.items()))
    click.echo(f"figure: {result['figure']}")


@analyze.command()
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Output directory.")
@click.option("--scale", type=click.Choice(["quick", "paper"]), default="quick", show_default=True)
def theory(out: Path, scale: str) -> None:
    """The contraction of never-used softmax rows under (S)GD with weight decay, against Lemma 4.1."""
    from symgen.analysis.theory import run_theory

    result = run_theory(out, scale)
    for part in result["claim"]["parts"]:
        click.echo(f"{'pass' if part['ok'] else 'fail'}: {part['text']} ({part['measured']})")


@analyze.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True, help="JSON file for the table.")
def sweep(run_dirs: tuple[Path, ...], out: Path) -> None:
    """Chain-of-thought Horn runs side by side, finished or stopped early: what each changed against its
    recipe, the step its rule choice passed 0.5, its last evaluation, and its own heads' attention share
    on earlier copies of a symbol (a same-symbol scaffold switched off). Prints a Markdown table."""
    import json

    from symgen.analysis.horn_sweep import markdown, sweep_row
    from symgen.errors import UserError

    for run_dir in run_dirs:
        if not (run_dir / "config.yaml").exists():
            raise UserError(f"{run_dir} is not a run directory (no config.yaml)")
    rows = [sweep_row(d) for d in run_dirs]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=1) + "\n")
    click.echo(markdown(rows), nl=False)
