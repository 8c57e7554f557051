"""Paper B, systematic generalization (§5, claim B5.1): a looped transformer composes two facts it
has only seen as single facts (OOD 2-hop); vanilla models with one pass — one block, or as many
distinct blocks as the looped model's effective depth — do not. Accuracy is tracked over training
and the three grokking phases (train, ID, OOD) are timed here; kg_inside judges B5.2."""

from __future__ import annotations

from pathlib import Path

import yaml

from symgen.analysis.grokking import grokking_figure, in_order, phase_times
from symgen.analysis.plots import line_figure
from symgen.experiments.claims import Claim, parts_claim
from symgen.experiments.kg_systematic.claims import B51, STATEMENTS
from symgen.experiments.types import Experiment, Section, Table
from symgen.measures.metrics import curve, first_crossing, read_metrics
from symgen.training.run_dir import read_summary

LOOPED_OOD = 0.5  # quick-scale bar for B5.1 (paper: ≈ 0.75–0.8; capped by OOD atomic recall)
VANILLA_OOD = 0.1
PAPER_OOD = (0.75, 0.8)  # B5.1's OOD level for R = 2/4/8, judged at paper scale only
PAPER_OOD_TOLERANCE = 0.05  # "≈": a level within this of PAPER_OOD matches it
LEARNED_FRACTION = 0.9  # a run has learned OOD at the first step reaching this fraction of its final OOD
LAST_EVALS = 3  # final numbers average the last evaluations (single ones swing by a few points)


class KGSystematicExperiment(Experiment):
    name = "kg-systematic"
    title = "Paper B: systematic composition of knowledge-graph facts (looped vs vanilla)"

    statements = STATEMENTS

    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        rows, figures, finals = [], [], {}
        ood_curves = {}
        for name, run in run_dirs.items():
            records, summary = read_metrics(run), read_summary(run)
            cfg = summary.get("name", name)
            final = final_accuracies(records)
            times = phase_times(records)
            loops, layers = run_shape(run)
            learned = learned_step(records, final.get("ood", 0.0))
            finals[name] = final | {"phases": times, "loops": loops, "learned_step": learned}
            ood_curves[name] = curve(records, "eval/ood/accuracy")
            figures.append(grokking_figure(figure_dir / f"{name}_grokking.png", records, f"{name}: grokking"))
            rows.append(
                [
                    name,
                    cfg,
                    layers,
                    loops,
                    summary["parameters"],
                    summary["steps"],
                    round(summary["train_seconds"]),
                    final.get("train"),
                    final.get("id"),
                    final.get("ood"),
                    final.get("atomic_ood"),
                    _fmt_time(times["train"]),
                    _fmt_time(times["id"]),
                    _fmt_time(times["ood"]),
                    _fmt_time(learned),
                ]
            )
        figures.insert(
            0,
            line_figure(
                figure_dir / "kg_systematic_ood.png",
                ood_curves,
                "training steps",
                "OOD 2-hop accuracy",
                "OOD composition: looped vs vanilla",
                ylim=(0, 1.02),
            ),
        )
        table = Table(
            ["run", "recipe", "blocks", "R", "parameters", "steps", "training seconds", "train", "ID", "OOD"]
            + ["OOD atomic recall", "train phase", "ID phase", "OOD phase", "OOD learned"],
            rows,
            f"Accuracies: mean of the last {LAST_EVALS} evaluations. Phase: first step with train/ID "
            f"accuracy >= 0.9 or OOD >= 0.5 (— never). OOD learned: first step with OOD >= "
            f"{LEARNED_FRACTION:g} × its final value, once that reaches {LOOPED_OOD} (B5.1's speed part).",
        )
        claims = [self.claim_b51(finals, run_dirs, suite)]
        text = (
            "Training: every atomic fact plus 2-hop chains of two ID facts; OOD chains combine two facts "
            "that were only ever seen as single facts. Looped = one block applied R times with shared "
            "weights; vanilla = one pass (one block, and a depth-matched stack of distinct blocks)."
        )
        phases = "; ".join(
            f"{n}: train {_fmt_time(f['phases']['train'])}, ID {_fmt_time(f['phases']['id'])}, "
            f"OOD {_fmt_time(f['phases']['ood'])}" + (" (in order)" if in_order(f["phases"]) else "")
            for n, f in finals.items()
        )
        return Section(self.title, [text, f"Phase steps — {phases}."], figures, [table], claims)

    @staticmethod
    def claim_b51(finals: dict[str, dict], run_dirs: dict[str, Path], suite: str = "quick") -> Claim:
        """B5.1 judged part by part against its sentence and the paper's numbers: looped models reach
        the OOD bar; vanilla models stay near zero; R = 4 learns faster than R = 2; the looped OOD
        level matches the paper's ≈ 0.75–0.8 (judged at paper scale; smaller suites use the bar)."""
        looped = {n: f for n, f in finals.items() if "looped" in n and "ood" in f}
        vanilla = {n: f for n, f in finals.items() if "looped" not in n and "ood" in f}
        ood = {n: f["ood"] for n, f in {**looped, **vanilla}.items()}
        parts = dict(
            [
                _looped_part(looped),
                _vanilla_part(looped, vanilla),
                _speed_part(looped, suite),
                _level_part(looped, suite),
            ]
        )
        claim = parts_claim(B51, parts, [str(p) for p in run_dirs.values()])
        steps = {n: f.get("learned_step") for n, f in looped.items()}
        claim.values = {f"{n}_ood": v for n, v in ood.items()} | {
            f"{n}_learned_step": t for n, t in steps.items() if t is not None
        }
        return claim


def _looped_at(looped: dict[str, dict], r: int) -> tuple[str, dict] | None:
    """The first looped run trained at R = r (its `loops`), if the suite has one."""
    return next(((n, f) for n, f in looped.items() if f.get("loops") == r), None)


Part = tuple[str, bool | None]  # a part of a claim's sentence with what was measured, and its outcome


def _looped_part(looped: dict[str, dict]) -> Part:
    if not looped:
        return "looped models generalize: no looped run in this suite", None
    ood = ", ".join(f"{n} {f['ood']:.2f}" for n, f in looped.items())
    return (
        f"looped models generalize: OOD {ood} >= {LOOPED_OOD}",
        min(f["ood"] for f in looped.values()) >= LOOPED_OOD,
    )


def _vanilla_part(looped: dict[str, dict], vanilla: dict[str, dict]) -> Part:
    """Vanilla OOD near zero and below every looped run; judged only when some looped run learned."""
    if not vanilla:
        return "vanilla models do not generalize: no vanilla run in this suite", None
    text = (
        "vanilla models do not: OOD "
        + ", ".join(f"{n} {f['ood']:.2f}" for n, f in vanilla.items())
        + f" <= {VANILLA_OOD}, below every looped run"
    )
    if not any(f["ood"] >= LOOPED_OOD for f in looped.values()):
        return (
            text + " (no looped run reached the bar: without that contrast the vanilla failure says nothing)",
            None,
        )
    worst_looped = min(f["ood"] for f in looped.values())
    return text, all(f["ood"] <= VANILLA_OOD and f["ood"] < worst_looped for f in vanilla.values())


def _step(f: dict) -> str:
    return "never" if f.get("learned_step") is None else f"step {f['learned_step']:g}"


def _speed_part(looped: dict[str, dict], suite: str) -> Part:
    """R = 4 reached its final OOD level at an earlier step than R = 2 (or R = 2 never did)."""
    r2, r4 = _looped_at(looped, 2), _looped_at(looped, 4)
    head = "R = 4 learns faster than R = 2 (paper: ~2k against ~7k epochs)"
    if r2 is None or r4 is None:
        missing = [f"R = {r}" for r, run in ((2, r2), (4, r4)) if run is None]
        return f"{head}: the {suite} suite trains no looped run at {' or '.join(missing)}", None
    how = (
        f"first step with OOD >= {LEARNED_FRACTION:g} × its final value, counted once the final value "
        f"reaches {LOOPED_OOD}"
    )
    text = f"{head}: {r4[0]} {_step(r4[1])}, {r2[0]} {_step(r2[1])} ({how})"
    t2, t4 = r2[1].get("learned_step"), r4[1].get("learned_step")
    if t2 is None and t4 is None:
        return text + "; neither learned", None
    return text, t4 is not None and (t2 is None or t4 < t2)


def _level_part(looped: dict[str, dict], suite: str) -> Part:
    """The looped OOD level against the paper's range; judged at paper scale only."""
    lo, hi = PAPER_OOD
    head = f"the paper's OOD level ≈ {lo}–{hi} for R = 2/4/8"
    if not looped:
        return f"{head}: no looped run in this suite", None
    level = ", ".join(f"{n} {f['ood']:.2f}" for n, f in looped.items())
    if suite != "paper":
        text = (
            f"{head}: measured {level}; at {suite} scale (smaller models and data than the paper's) "
            f"this level is not tested, the looped part uses the bar {LOOPED_OOD} instead"
        )
        return text, None
    within = all(lo - PAPER_OOD_TOLERANCE <= f["ood"] <= hi + PAPER_OOD_TOLERANCE for f in looped.values())
    return f"{head}: measured {level}, each within {PAPER_OOD_TOLERANCE} of the paper's range", within


def learned_step(records: list[dict], final_ood: float) -> float | None:
    """The first step at which OOD accuracy reaches LEARNED_FRACTION of its final value, or None when
    the final value stays below the looped bar (the run never learned to compose OOD facts)."""
    if final_ood < LOOPED_OOD:
        return None
    return first_crossing(records, "eval/ood/accuracy", LEARNED_FRACTION * final_ood)


def final_accuracies(records: list[dict], last: int = LAST_EVALS) -> dict[str, float]:
    """{split: mean accuracy over the last `last` evaluations}."""
    out = {}
    for split in ("train", "id", "ood", "atomic_ood"):
        _, ys = curve(records, f"eval/{split}/accuracy")
        if ys:
            tail = ys[-last:]
            out[split] = round(sum(tail) / len(tail), 4)
    return out


def run_shape(run: Path) -> tuple[int, int]:
    """(R, blocks) of a run, from its resolved config."""
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    return cfg["model"]["n_loops"], cfg["model"]["n_layers"]


def _fmt_time(t: float | None) -> str:
    return "—" if t is None else str(int(t))
