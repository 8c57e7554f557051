"""Looking inside the looped models of the knowledge-graph experiments (claims B5.2, B5.4–B5.6).

No runs of its own: it analyses the runs of `kg-systematic` (logit lens, grokking phases) and
`kg-depth` (inference iterations, margins, halting; its equal-compute runs), trained once however
many experiments read them. Each claim's numbers are read here and judged in claims.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from symgen.analysis import loop_report
from symgen.config import ExperimentConfig, resolve
from symgen.experiments.claims import Claim
from symgen.experiments.kg_depth.experiment import STALL_SUFFIX
from symgen.experiments.kg_inside.claims import (
    DEPTH_KEYS,
    KL_EPS,
    LEARNED_DEPTH,
    LEARNED_HALTING,
    LEARNED_ID,
    STATEMENTS,
    check_b52,
    check_b54,
    check_b55,
    check_b56,
)
from symgen.experiments.kg_systematic.claims import looped_arms
from symgen.experiments.kg_systematic.experiment import run_finals
from symgen.experiments.types import Experiment, Section, Table
from symgen.measures.metrics import curve
from symgen.training.run_dir import read_summary

HALTING_ITERS = 16  # the authors' cap on halting iterations


def _copy_figure(result: dict, figure_dir: Path, name: str) -> Path:
    target = figure_dir / name
    shutil.copyfile(result["figure"], target)
    return target


def _best(grid: list[list[float]]) -> float:
    return max(v for layers in grid for v in layers)


def depth_models(run_dirs: dict[str, Path]) -> tuple[dict[str, Path], tuple[str, Path] | None]:
    """The looped fixed-R depth runs (R >= 2) by R, and the dynamic-R one, of the equal-compute
    protocol (the runs every suite trains; `-stall` runs are B5.3's second protocol)."""
    fixed, trained_r, dynamic = {}, {}, None
    for name, run in run_dirs.items():
        cfg = resolve(Path(run) / "config.yaml")
        if not _looped_depth_model(name, cfg):
            continue
        if cfg.train.loops == "poisson":
            dynamic = (name, run)
        else:
            fixed[name], trained_r[name] = run, cfg.model.n_loops
    return {n: fixed[n] for n in sorted(fixed, key=trained_r.__getitem__)}, dynamic


def _looped_depth_model(name: str, cfg: ExperimentConfig) -> bool:
    """A looped depth run of the equal-compute protocol: dynamic R, or a fixed R above 1."""
    looped = cfg.train.loops == "poisson" or cfg.model.n_loops > 1
    return name.startswith("kg-depth") and not name.endswith(STALL_SUFFIX) and looped


def absent_depth_models(absent: dict[str, ExperimentConfig]) -> dict[str, int | None]:
    """The looped equal-compute depth runs the output lacks, as `depth_models` would have read them:
    name -> training R (the dynamic-R run: None)."""
    return {
        name: None if cfg.train.loops == "poisson" else cfg.model.n_loops
        for name, cfg in absent.items()
        if _looped_depth_model(name, cfg)
    }


def _b54_model(name: str, run: Path, dynamic: bool) -> tuple[dict, dict]:
    """Inference iterations r = 1..3R of one model: what B5.4 judges, and the analysis result."""
    r_max = 3 * loop_report.training_r(resolve(Path(run) / "config.yaml"))
    it = loop_report.iterations(run, r_max)
    model = {"name": name, "R": None if dynamic else it["train_r_read"], "r_max": r_max}
    return model | {k: it[k] for k in DEPTH_KEYS}, it


def _b54_row(model: dict, it: dict) -> list:
    baseline = f"R = {model['R']}" if model["R"] is not None else "best of its range (validation)"
    return [
        model["name"],
        it["train_loops"],
        model["learnable_depth"],
        model["curriculum_stage"],
        f"{model['baseline_r']} ({baseline})",
        _dash(model["depth_baseline"]),
        f"1..{model['r_max']}",
        model["chosen_r"],
        _dash(it["depth_chosen_r_validation"]),
        _dash(model["depth_chosen_r"]),
        _dash(it["depth_oracle_r"]),
    ]


def _dash(value: object) -> object:
    return "—" if value is None else value


def b54(
    section: Section,
    fixed: dict[str, Path],
    dynamic: tuple[str, Path] | None,
    figure_dir: Path,
    absent: dict[str, int | None],
) -> Claim:
    """More inference iterations than trained: every looped depth model swept over r = 1..3R."""
    runs = [(n, r, False) for n, r in fixed.items()] + ([(*dynamic, True)] if dynamic else [])
    models, rows = [], []
    for name, run, is_dynamic in runs:
        model, it = _b54_model(name, run, is_dynamic)
        models.append(model)
        rows.append(_b54_row(model, it))
        section.figures.append(_copy_figure(it, figure_dir, f"kg_iterations_{name}.png"))
    headers = ["run", "training R", "learnable depth", "deepest hop trained", "baseline r"]
    headers += [
        "depth at baseline (test)",
        "inference r",
        "chosen r (validation)",
        "depth at chosen r (validation)",
    ]
    headers += ["depth at chosen r (test)", "oracle: each hop at its best r (test; diagnostic)"]
    caption = (
        f"Depth with more inference iterations: the deepest hop count whose accuracy reaches "
        f"{loop_report.DEPTH_BAR} ({loop_report.SPLIT}). r is chosen on the validation half, over 1..3R "
        "(the dynamic model's baseline: the best r of its training range, chosen the same way); depths are "
        "read on the test half. The oracle column lets every hop pick its r on the test half: a diagnostic, "
        "never evidence."
    )
    section.tables.append(Table(headers, rows, caption))
    return check_b54(models, [f"kg_iterations_{n}.png" for n, _, _ in runs], absent)


def _margin_input(name: str, run: Path, iters: int) -> dict:
    result = loop_report.margin_curves(run, iters)
    depth = read_summary(run).get("learnable_depth")
    r = loop_report.training_r(resolve(Path(run) / "config.yaml"))
    return {
        "name": name,
        "R": r,
        "learnable_depth": depth,
        "groups": result["groups"],
        "figure": result["figure"],
    }


def b55(
    section: Section,
    largest: tuple[str, Path],
    dynamic: tuple[str, Path] | None,
    iters: int,
    figure_dir: Path,
    absent: dict[str, int | None],
) -> Claim:
    """Margins per iteration on the largest-R fixed model and the dynamic one."""
    if largest is None:
        return check_b55(None, None, [], absent)
    fixed = _margin_input(*largest, iters)
    dyn = _margin_input(*dynamic, iters) if dynamic else None
    rows = [
        [m["name"], group, g["peak_iteration"], g["peak_margin"], g["margin"][-1], _dash(g["t_star"])]
        for m in (fixed, dyn)
        if m is not None
        for group, g in m["groups"].items()
    ]
    section.tables.append(
        Table(
            ["run", "queries", "peak iteration", "peak margin", "last margin", "t*"],
            rows,
            f"Mean logit margin (target minus best other) per iteration, iterations 1..{iters}; B5.5 reads "
            f"the hop counts up to {fixed['name']}'s learnable depth ({fixed['learnable_depth']})",
        )
    )
    section.figures.append(_copy_figure(fixed, figure_dir, "kg_margins.png"))
    evidence = ["kg_margins.png"]
    if dyn is not None:
        section.figures.append(_copy_figure(dyn, figure_dir, "kg_margins_dynamic.png"))
        evidence.append("kg_margins_dynamic.png")
    return check_b55(fixed, dyn, evidence, absent)


def _halting_row(row: dict) -> list:
    return [row["rule"], row["accuracy"], row["mean_iterations"], f"{row['flops_saved']:.0%}"]


def b56(section: Section, dynamic: tuple[str, Path] | None, figure_dir: Path) -> Claim:
    """KL + entropy halting against KL-only and every fixed r, at each KL threshold of KL_EPS."""
    if dynamic is None:
        return check_b56({}, None, [])
    by_eps, rows, evidence = {}, [], []
    for eps in KL_EPS:
        h = loop_report.halting(dynamic[1], kl_eps=eps, max_iters=HALTING_ITERS)
        by_eps[eps] = h
        name = "kg_halting.png" if eps == KL_EPS[0] else f"kg_halting_eps{eps:g}.png"
        section.figures.append(_copy_figure(h, figure_dir, name))
        evidence.append(name)
        rows += [_halting_row(r) for r in h["overall"][:2]]  # the two rules at this ε
    rows += [_halting_row(r) for r in h["overall"][2:]]  # every fixed r, the same at every ε
    section.tables.append(
        Table(
            ["rule", "accuracy", "mean iterations", "FLOPs saved"],
            rows,
            f"Halting on {dynamic[0]}, all held-out hop counts, at most {HALTING_ITERS} iterations; "
            f"KL thresholds ε = {' and '.join(f'{e:g}' for e in KL_EPS)} (the paper's text, the authors' "
            f"code), entropy threshold {h['entropy_max']:g} nats",
        )
    )
    return check_b56(by_eps, dynamic[0], evidence)


def _systematic_runs(run_dirs: dict[str, Path]) -> tuple[str | None, str | None, str | None]:
    """The looped systematic run the lens reads (of B5.1's looped arms, R = 4 when trained, else the
    first, which B5.2's parts then name; None when there is none), the depth-matched vanilla run and
    the one-block vanilla run."""
    finals = {n: run_finals(r)[0] for n, r in run_dirs.items() if n.startswith("kg-sys")}
    loops = {n: f["loops"] for n, f in finals.items()}
    looped = list(looped_arms(finals)[0])  # as B5.1 reads them
    pick = next((n for n in looped if loops[n] == 4), looped[0] if looped else None)
    deep = "kg-sys-deep" if "kg-sys-deep" in loops else None
    vanilla = "kg-sys-vanilla" if "kg-sys-vanilla" in loops else None
    return pick, deep, vanilla


def first_iteration_bridge(lens: dict) -> float:
    """The best top-1 rate of the bridge entity at r1 over the layers of the first iteration only
    (final weights, ID items): "early in the first iteration", not the best anywhere."""
    final = lens["checkpoints"]["final"]
    return max(final["id"]["bridge_at_r1"][0]) if "id" in final else 0.0


def _lens_rows(name: str, lens: dict) -> list[list]:
    sets = ("train", "id", "ood")
    probes = ("bridge_at_r1", "target_at_r2")
    rows = []
    for step, per_set in lens["checkpoints"].items():
        cells = [f"{_best(per_set[s][p]):.2f}" if s in per_set else "—" for s in sets for p in probes]
        first = f"{max(per_set['id']['bridge_at_r1'][0]):.2f}" if "id" in per_set else "—"  # iteration 1
        rows.append([name, step, *cells, first])
    return rows


def _vanilla_lens(name: str | None, run_dirs: dict[str, Path]) -> tuple[dict | None, list[list]]:
    """What B5.2 reads of a vanilla run (its ID accuracy, the OOD target's best top-1 at r2 over every
    layer of every kept checkpoint) and its rows of the lens table."""
    if name is None:
        return None, []
    lens = loop_report.lens(run_dirs[name])
    grids = [per_set["ood"]["target_at_r2"] for per_set in lens["checkpoints"].values() if "ood" in per_set]
    top = max((_best(g) for g in grids), default=0.0)
    read = {"name": name, "id": run_finals(run_dirs[name])[0]["id"], "ood_target_r2": top}
    return read, _lens_rows(name, lens)


def _lens_table(rows: list[list]) -> Table:
    sets = [f"{s} {p}" for s in ("train", "id", "ood") for p in ("bridge@r1", "target@r2")]
    return Table(
        ["run", "checkpoint", *sets, "id bridge@r1, iteration 1"],
        rows,
        "Logit lens: best top-1 rate over all layers and iterations (the last column: over the first "
        "iteration's layers only), at every kept checkpoint and the final weights",
    )


def b52(section: Section, run_dirs: dict[str, Path], figure_dir: Path) -> Claim:
    """Three phases in order, and the logit lens on the looped and vanilla systematic runs."""
    name, deep_name, vanilla_name = _systematic_runs(run_dirs)
    deep, deep_rows = _vanilla_lens(deep_name, run_dirs)
    vanilla, vanilla_rows = _vanilla_lens(vanilla_name, run_dirs)
    if name is None:
        if deep_rows or vanilla_rows:
            section.tables.append(_lens_table(deep_rows + vanilla_rows))
        return check_b52(None, deep, vanilla, [str(run_dirs[n]) for n in (deep_name, vanilla_name) if n])
    finals, records, _ = run_finals(run_dirs[name])
    phases = finals["phases"]
    steps, _ = curve(records, "eval/id/accuracy")
    between = None
    if phases["train"] is not None and phases["id"] is not None:
        between = sum(phases["train"] < s <= phases["id"] for s in steps)
    lens = loop_report.lens(run_dirs[name])
    section.figures.append(_copy_figure(lens, figure_dir, "kg_lens_looped.png"))
    looped = {"name": name, "loops": finals["loops"], "id": finals["id"], "phases": phases}
    looped["evals_between"] = between
    looped["bridge_iteration_1"] = first_iteration_bridge(lens)
    section.tables.append(_lens_table(_lens_rows(name, lens) + deep_rows + vanilla_rows))
    return check_b52(looped, deep, vanilla, ["kg_lens_looped.png", str(run_dirs[name])])


class KGInsideExperiment(Experiment):
    name = "kg-inside"
    title = "Paper B: inside the looped models — iterations, overthinking, halting, logit lens"

    statements = STATEMENTS

    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        section = Section(self.title)
        fixed, dynamic = depth_models(run_dirs)
        absent = absent_depth_models(self.absent(suite, run_dirs))
        largest = list(fixed.items())[-1] if fixed else None
        iters = 16 if suite == "smoke" else 40  # margin curves: well past every training R
        section.claims.append(b54(section, fixed, dynamic, figure_dir, absent))
        section.claims.append(b55(section, largest, dynamic, iters, figure_dir, absent))
        section.claims.append(b56(section, dynamic, figure_dir))
        section.claims.append(b52(section, run_dirs, figure_dir))
        margins = (
            "none"
            if largest is None
            else f"{largest[0]} (learnable depth {read_summary(largest[1]).get('learnable_depth')})"
        )
        section.paragraphs.append(
            "Inference iterations read every looped depth model of the equal-compute protocol; r is chosen "
            f"on half the held-out chains of each hop count ({loop_report.SPLIT}) and depth is read on the "
            f"other half. Margins read {margins} and the dynamic-R model; halting reads the dynamic-R model "
            f"at ε = {' and '.join(f'{e:g}' for e in KL_EPS)}. A model counts in a comparison once it "
            f"learned its own task (systematic runs: ID accuracy >= {LEARNED_ID}; depth runs: learnable "
            f"depth >= {LEARNED_DEPTH}; halting: best fixed-r accuracy >= {LEARNED_HALTING})."
        )
        return section
