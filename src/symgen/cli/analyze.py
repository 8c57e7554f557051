"""`symgen analyze`: look inside a trained run (figures and JSON under RUN_DIR/analysis/)."""

from __future__ import annotations

from pathlib import Path

import click

RUN_DIR = click.argument("run_dir", type=click.Path(path_type=Path))


@click.group()
def analyze() -> None:
    """Analyses of trained runs: iterations, margins, halting, lens (looped KG models); theory."""


@analyze.command()
@RUN_DIR
@click.option("--max-iters", default=20, show_default=True, help="Inference iterations r = 1..N.")
def iterations(run_dir: Path, max_iters: int) -> None:
    """Accuracy per hop count against inference iterations (heatmap); r chosen on half the chains."""
    from symgen.analysis.loop_report import iterations as run

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
@click.option("--max-iters", default=50, show_default=True)
def margins(run_dir: Path, max_iters: int) -> None:
    """Mean logit margin per iteration and hop count; peak iteration and t*."""
    from symgen.analysis.loop_report import margin_curves

    result = margin_curves(run_dir, max_iters)
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
