"""Looking inside the looped models of the knowledge-graph experiments (claims B5.2, B5.4–B5.6).

No runs of its own: it analyses the runs of `kg-systematic` (logit lens, grokking phases) and
`kg-depth` (inference iterations, margins, halting), trained once however many experiments read
them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from symgen.analysis import loop_report
from symgen.analysis.grokking import in_order, run_phases
from symgen.config import resolve
from symgen.experiments.claims import Claim, Statement, parts_claim
from symgen.experiments.kg_inside.claims import B52, B54, B55, B56, STATEMENTS
from symgen.experiments.types import Experiment, Section, Table
from symgen.measures.metrics import rank_correlation
from symgen.training.run_dir import read_summary

DECODABLE = 0.5  # the bridge counts as decodable at r1 when its top-1 rate reaches this
NOT_DECODED = 0.1  # vanilla "never decodes" the OOD second hop: top-1 rate stays below this
LEARNED = 0.5  # a claim about a model's behaviour is judged only when its best accuracy reaches this
FALL = 0.05  # margins "fall" when the last iteration is this far (relative) below the peak
SIMILAR_COST = 1.1  # "at similar cost": at most this many times the other rule's mean iterations


def _claim(statement: Statement, measured: str, ok: bool, evidence: list[str]) -> Claim:
    return statement.judged(measured, "reproduced" if ok else "not reproduced", evidence)


def mean_decay(result: dict, groups: list[str]) -> float:
    """Mean relative fall of the margin from its peak to the last iteration, over `groups`."""
    falls = []
    for g in groups:
        m = result["groups"].get(g)
        if m:
            falls.append((m["peak_margin"] - m["margin"][-1]) / max(abs(m["peak_margin"]), 1e-9))
    return sum(falls) / max(len(falls), 1)


def _copy_figure(result: dict, figure_dir: Path, name: str) -> Path:
    target = figure_dir / name
    shutil.copyfile(result["figure"], target)
    return target


def _train_r(run: Path) -> int:
    return loop_report.training_r(resolve(Path(run) / "config.yaml"))


def _depth_under_halting(result: dict) -> int | None:
    """Deepest hop count whose accuracy under KL + entropy halting reaches 0.6."""
    hops = [int(n.removeprefix("hop_")) for n, rows in result["groups"].items() if rows[0]["accuracy"] >= 0.6]
    return max(hops, default=None)


def _best(grid: list[list[float]]) -> float:
    return max(v for layers in grid for v in layers)


class KGInsideExperiment(Experiment):
    name = "kg-inside"
    title = "Paper B: inside the looped models — iterations, overthinking, halting, logit lens"

    statements = STATEMENTS

    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        section = Section(self.title)
        depth_runs = {n: d for n, d in run_dirs.items() if n.startswith("kg-depth-r") and n != "kg-depth-r1"}
        deepest = max(depth_runs, key=lambda n: int(n.removeprefix("kg-depth-r")))
        dynamic = run_dirs.get("kg-depth-dynamic")
        max_iters = 8 if suite == "smoke" else 20

        # B5.4: more inference iterations than trained reach deeper hops, where the paper sees it: on the
        # dynamic model (read under halting) and on every fixed R > 4 model, against the best r <= 3 R
        candidates = {n: d for n, d in depth_runs.items() if _train_r(d) > 4}
        candidates = (candidates or {deepest: depth_runs[deepest]}) | (
            {"kg-depth-dynamic": dynamic} if dynamic else {}
        )
        rows, gains = [], []
        for name, run in candidates.items():
            r_max = 3 * _train_r(run)
            it = loop_report.iterations(run, r_max)
            section.figures.append(_copy_figure(it, figure_dir, f"kg_iterations_{name}.png"))
            if name == "kg-depth-dynamic":
                h = loop_report.halting(run, max_iters=r_max)
                base, how = (
                    _depth_under_halting(h),
                    f"halting (KL < {h['kl_eps']:g}, H < {h['entropy_max']:g})",
                )
            else:
                base, how = it["depth_at_train_r"], f"R = {it['train_loops']}"
            best = it["depth_best_r"]
            gains.append((best or 0) > (base or 0))
            rows.append([name, it["learnable_depth"], how, base or "—", f"1..{r_max}", best or "—"])
        section.tables.append(
            Table(
                [
                    "run",
                    "learnable depth",
                    "read at",
                    "deepest hop >= 0.6",
                    "inference r",
                    "deepest hop >= 0.6",
                ],
                rows,
                "Depth with more inference iterations: the deepest hop count whose held-out accuracy reaches "
                "0.6 at the training R (the dynamic model: under adaptive halting) and at the best r <= 3 R",
            )
        )
        b54 = _claim(
            B54,
            "; ".join(f"{r[0]}: {r[3]} at {r[2]}, {r[5]} with r in {r[4]}" for r in rows),
            any(gains),
            [f"kg_iterations_{n}.png" for n in candidates],
        )
        b54.values = {r[0]: {"depth_at_training_r": r[3], "depth_best_r": r[5]} for r in rows}
        section.claims.append(b54)

        # B5.5: margins rise then fall, deeper hops at least; the dynamic model decays more slowly
        margin_runs = {deepest: depth_runs[deepest]} | ({"kg-depth-dynamic": dynamic} if dynamic else {})
        margin_results = {n: loop_report.margin_curves(d, 2 * max_iters) for n, d in margin_runs.items()}
        rows, falls = [], {}
        for run, result in margin_results.items():
            for group, m in result["groups"].items():
                last = m["margin"][-1]
                rose = 1 < m["peak_iteration"] < len(m["margin"])
                fell = rose and last < m["peak_margin"] - FALL * abs(m["peak_margin"])
                falls[(run, group)] = fell
                rows.append([run, group, m["peak_iteration"], m["peak_margin"], last, m["t_star"] or "—"])
        section.tables.append(
            Table(
                ["run", "queries", "peak iteration", "peak margin", "last margin", "t*"],
                rows,
                "Mean logit margin (target minus best other) per iteration",
            )
        )
        section.figures.append(_copy_figure(margin_results[deepest], figure_dir, "kg_margins.png"))
        deep_groups = sorted({g for _, g in falls}, key=lambda g: int(g.split("_")[1]))[-2:]
        rise_fall = all(falls[(deepest, g)] for g in deep_groups if (deepest, g) in falls)
        parts = {
            f"margins of {deepest} ({', '.join(deep_groups)}) peak at iterations "
            + ", ".join(str(margin_results[deepest]["groups"][g]["peak_iteration"]) for g in deep_groups)
            + f" and fall by the last ({2 * max_iters})": rise_fall
        }
        if dynamic:  # the second part of the sentence: the dynamic model decays more slowly
            fixed_decay = mean_decay(margin_results[deepest], deep_groups)
            dynamic_decay = mean_decay(margin_results["kg-depth-dynamic"], deep_groups)
            parts[
                f"relative fall from peak to last: dynamic {dynamic_decay:.2f} < {deepest} {fixed_decay:.2f}"
            ] = dynamic_decay < fixed_decay
        b55 = parts_claim(B55, parts, ["kg_margins.png"])
        b55.values = {
            f"{run}/{g}": {k: m[k] for k in ("peak_iteration", "peak_margin", "t_star")}
            | {"last": m["margin"][-1]}
            for run, result in margin_results.items()
            for g, m in result["groups"].items()
        }
        section.claims.append(b55)

        # B5.6: KL + entropy halting against KL-only and fixed r (the dynamic model when trained)
        halting_run = dynamic or depth_runs[deepest]
        h = loop_report.halting(halting_run, max_iters=16)
        adaptive, kl_only = h["overall"][0], h["overall"][1]
        section.figures.append(_copy_figure(h, figure_dir, "kg_halting.png"))
        section.tables.append(
            Table(
                ["rule", "accuracy", "mean iterations", "FLOPs saved"],
                [
                    [r["rule"], r["accuracy"], r["mean_iterations"], f"{r['flops_saved']:.0%}"]
                    for r in h["overall"]
                ],
                f"Halting on {Path(halting_run).name}, all held-out hop counts, at most 16 iterations; "
                f"KL threshold ε = {h['kl_eps']:g}, entropy threshold {h['entropy_max']:g} nats",
            )
        )
        best_fixed = max(r["accuracy"] for r in h["overall"][2:])
        hops = sorted(h["groups"], key=lambda g: int(g.removeprefix("hop_")))
        iterations = [h["groups"][g][0]["mean_iterations"] for g in hops]
        rho = rank_correlation([int(g.removeprefix("hop_")) for g in hops], iterations)
        similar = adaptive["mean_iterations"] <= SIMILAR_COST * kl_only["mean_iterations"]
        never_bound = (adaptive["accuracy"], adaptive["mean_iterations"]) == (
            kl_only["accuracy"],
            kl_only["mean_iterations"],
        )
        parts = {
            f"KL + entropy accuracy {adaptive['accuracy']:.3f} > KL-only {kl_only['accuracy']:.3f}"
            + (" (the entropy bar never bound)" if never_bound else ""): adaptive["accuracy"]
            > kl_only["accuracy"],
            f"at similar cost: {adaptive['mean_iterations']:.2f} iterations against KL-only "
            f"{kl_only['mean_iterations']:.2f} (at most {SIMILAR_COST:g}×)": similar,
            "tracks the needed depth: iterations per hop count "
            + " ".join(f"{g.removeprefix('hop_')}:{it:.1f}" for g, it in zip(hops, iterations, strict=True))
            + f" (rank correlation {rho:.2f} > 0.5)": rho > 0.5,
        }
        b56 = parts_claim(B56, parts, ["kg_halting.png"])
        b56.measured += f"; {adaptive['flops_saved']:.0%} FLOPs saved; best fixed r: {best_fixed:.3f}"
        b56.values = {
            "kl_entropy_accuracy": adaptive["accuracy"],
            "kl_entropy_iterations": adaptive["mean_iterations"],
            "kl_only_accuracy": kl_only["accuracy"],
            "kl_only_iterations": kl_only["mean_iterations"],
            "best_fixed_accuracy": best_fixed,
            "iterations_by_hop": dict(zip(hops, iterations, strict=True)),
            "iterations_hop_rank_correlation": round(rho, 3),
        }
        if best_fixed < LEARNED:  # a model at chance cannot tell halting rules apart
            b56.verdict = "not judged"
            b56.measured += f" (the model never learned its task: best fixed-r accuracy < {LEARNED})"
        section.claims.append(b56)

        # B5.2: three phases in order; bridge decodable at r1 after grokking; vanilla never decodes OOD hop 2
        looped, vanilla = run_dirs["kg-sys-looped"], run_dirs["kg-sys-vanilla"]
        phases = run_phases(looped)
        lens_looped, lens_vanilla = loop_report.lens(looped), loop_report.lens(vanilla)
        section.figures.append(_copy_figure(lens_looped, figure_dir, "kg_lens_looped.png"))
        final = lens_looped["checkpoints"]["final"]
        bridge = _best(final["id"]["bridge_at_r1"]) if "id" in final else 0.0
        vanilla_ood = _best(lens_vanilla["checkpoints"]["final"]["ood"]["target_at_r2"])
        rows = []
        for step, sets in lens_looped["checkpoints"].items():
            rows.append(
                [
                    step,
                    *(
                        f"{_best(sets[s][p]):.2f}" if s in sets else "—"
                        for s in ("train", "id", "ood")
                        for p in ("bridge_at_r1", "target_at_r2")
                    ),
                ]
            )
        section.tables.append(
            Table(
                [
                    "looped checkpoint",
                    *(f"{s} {p}" for s in ("train", "id", "ood") for p in ("bridge@r1", "target@r2")),
                ],
                rows,
                "Logit lens: best top-1 rate over all layers and iterations",
            )
        )
        ordered = in_order(phases)
        ok = ordered and bridge >= DECODABLE and vanilla_ood < NOT_DECODED
        b52 = _claim(
            B52,
            f"phase steps train/ID/OOD {phases['train']}/{phases['id']}/{phases['ood']} "
            f"(in order: {ordered}); looped ID bridge at r1 decodable up to {bridge:.2f}; "
            f"vanilla OOD target at r2 up to {vanilla_ood:.2f}",
            ok,
            ["kg_lens_looped.png"],
        )
        b52.values = {f"phase_{k}": v for k, v in phases.items()} | {
            "looped_bridge_at_r1": bridge,
            "vanilla_ood_target_at_r2": vanilla_ood,
        }
        section.claims.append(b52)
        learnable = read_summary(depth_runs[deepest]).get("learnable_depth")
        section.paragraphs.append(
            f"Iterations and margins read {deepest} (learnable depth {learnable}); halting "
            f"reads {Path(halting_run).name}."
        )
        return section
