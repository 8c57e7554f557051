"""Beyond both papers (SPEC C.1): the claims C1–C3, stated before any of their runs, and their judges.

Each claim is judged on one seed's runs, part by part (`symgen.experiments.claims`). Every arm of a
comparison first learns its own seen task — all_seen accuracy ≥ LEARNED_BAR at every trained depth,
at its own R — or its part reads `not judged`, naming the arm and its number. C1's first two parts
judge each looped model against the same bar (fixed R; dynamic R, whose own R is its plain read-out at
model.n_loops); its last two are controls of the fixed-R model, so that model is an arm of them too.
C1 reads a looped model at the inference iteration count r chosen on validation problems (never on the
test set); the r the test set itself would choose is a labelled diagnostic in the claim's note, never
its evidence.
"""

from __future__ import annotations

from symgen.analysis.implicit import ImplicitRun, choose_r, reached
from symgen.experiments.claims import Claim, Part, Statement, judge, not_judged, unlearned
from symgen.measures.intervals import Rate, difference
from symgen.measures.metrics import rank_correlation

LEARNED_BAR = 0.75  # all_seen accuracy at every trained depth, at the own R (SPEC "Judging the claims")
REACH_BAR = 0.75  # a depth is reached when its accuracy and every shallower depth's is at least this
GAP_BAR = 0.10  # C2: |all_seen − all_unseen| at every trained depth
CHANCE_BAR = 0.6  # C2: "at chance" on balanced labels (0.5 expected)
RANK_BAR = 0.5  # C3: rank correlation of mean halting iterations with proof depth

LOOPED_RUN = "implicit-looped-frozen-same-symbol"
DYNAMIC_RUN = "implicit-dynamic-frozen-same-symbol"
DEEP_RUN = "implicit-deep-frozen-same-symbol"
VANILLA_RUN = "implicit-vanilla-frozen-same-symbol"
LEARNED_RUN = "implicit-looped"
LEARNED_WHAT = "all_seen accuracy at its worst trained depth, at its own R"

Runs = dict[str, ImplicitRun]

C1 = Statement(
    "C1",
    "Beyond both papers (claim C1), stated before measured: on Horn problems without a chain of "
    "thought, a looped model answers deeper proofs than it was trained on when given more iterations, "
    "and a vanilla model of equal parameters does not (nor one of equal compute: the looped model's "
    "layers as distinct blocks, the control that learns the trained depths).",
    "new question",
)

C2 = Statement(
    "C2",
    "Beyond both papers: without a chain of thought, with frozen symbol rows and same-symbol "
    "attention, all_unseen accuracy stays within 10 points of all_seen at every trained depth, while "
    "learned rows under weight decay fall to chance on all_unseen.",
    "new question",
)

C3 = Statement(
    "C3",
    "Beyond both papers: on implicit Horn problems, adaptive halting (KL + entropy) spends more "
    "iterations on deeper proofs.",
    "new question",
)

STATEMENTS = (
    C1,
    C2,
    C3,
)

C1_LOOPED_MODELS = {LOOPED_RUN: "fixed R", DYNAMIC_RUN: "dynamic R, its own R the plain read-out"}


def c1_looped_text(name: str) -> str:
    return (
        f"the looped model {name} ({C1_LOOPED_MODELS[name]}) reaches deeper than its trained depths "
        "with more iterations: at the r chosen on a validation set (its deepest all_seen reach there, "
        f"ties to the fewest r), its reached depth on the test set (all_seen; that depth and every "
        f"shallower one ≥ {REACH_BAR}) > the trained depth and > its reach at its own R"
    )


C1_DEEP = (
    f"the compute-matched deep model ({DEEP_RUN}: the looped model's layer count as distinct blocks, no "
    "iterations to add) does not: its reached depth on the test set ≤ the trained depth"
)
C1_VANILLA = (
    f"the equal-parameter vanilla model ({VANILLA_RUN}) does not either: its reached depth on the test "
    "set ≤ the trained depth"
)
C2_FROZEN = (
    f"frozen symbol rows + same-symbol attention ({LOOPED_RUN}): |all_seen − all_unseen| ≤ {GAP_BAR} "
    "at every trained depth, at its R"
)
C2_LEARNED = (
    f"learned rows under weight decay ({LEARNED_RUN}, the control): all_unseen ≤ {CHANCE_BAR} "
    "(chance 0.5) at every trained depth, at its R"
)
C3_MODELS = {LOOPED_RUN: "fixed R", DYNAMIC_RUN: "dynamic R"}


def c3_text(name: str) -> str:
    return (
        f"{name} ({C3_MODELS[name]}): mean halting iterations grow with proof depth (all_seen, every test "
        f"depth): rank correlation over depths > {RANK_BAR} and the deepest depth's mean > the shallowest's"
    )


def blocked(runs: Runs, names: list[str]) -> str:
    """Why a part cannot be judged: a run it needs is missing, or an arm never learned ("" if neither)."""
    missing = [n for n in names if n not in runs]
    if missing:
        return f"no run {', '.join(missing)}"
    return unlearned({n: runs[n].worst_trained() for n in names}, LEARNED_BAR, LEARNED_WHAT)


def learned_note(runs: Runs, names: list[str]) -> str:
    worst = ", ".join(f"{n} {runs[n].worst_trained():.2f}" for n in names)
    return f"learned: {worst} ≥ {LEARNED_BAR} ({LEARNED_WHAT})"


def learned_values(runs: Runs, names: list[str]) -> dict[str, float]:
    """Each arm's worst trained-depth all_seen accuracy, as `learned_{run}`."""
    return {f"learned_{n}": round(runs[n].worst_trained(), 4) for n in names if n in runs}


def evidence(runs: Runs, names: list[str]) -> list[str]:
    return [str(runs[n].dir) for n in names if n in runs]


def by_depth(prefix: str, values: list[float] | dict[int, float]) -> dict[str, float]:
    """A flat dict of one number per depth, {prefix}_depth{d} (a list holds depths 1, 2, ...)."""
    items = values.items() if isinstance(values, dict) else enumerate(values, 1)
    return {f"{prefix}_depth{d}": round(v, 4) for d, v in items}


def rounded(values: list[float]) -> list[float]:
    return [round(v, 2) for v in values]


# ------------------------------------------------------------------------------------------ C1
def claim_c1(runs: Runs) -> Claim:
    parts = [c1_looped(runs, name) for name in C1_LOOPED_MODELS]
    parts += [c1_control(runs, DEEP_RUN, C1_DEEP), c1_control(runs, VANILLA_RUN, C1_VANILLA)]
    names = [*C1_LOOPED_MODELS, DEEP_RUN, VANILLA_RUN]
    return C1.check(parts, evidence(runs, names), c1_oracle(runs))


def c1_looped(runs: Runs, name: str) -> Part:
    """One looped model against C1's bar: more iterations, chosen on validation, reach deeper."""
    text = c1_looped_text(name)
    why = blocked(runs, [name])
    if why:
        return not_judged(text, why, learned_values(runs, [name]))
    run = runs[name]
    if not run.validation:
        return not_judged(text, f"{name} was not read on the validation set")
    r, validation_reach = choose_r(run.validation, REACH_BAR)
    reach = reached(run.accuracy("all_seen", r), REACH_BAR)
    at_own = reached(run.accuracy("all_seen"), REACH_BAR)
    trained = run.trained_depth
    values = {
        "r_validation": r,
        "validation_reach": validation_reach,
        "test_reach": reach,
        "test_reach_at_R": at_own,
        "trained_depth": trained,
    } | learned_values(runs, [name])
    measured = (
        f"r = {r} chosen on validation (reaches {validation_reach}); on the test set it reaches {reach} "
        f"at r = {r} (at its R = {run.own_r}: {at_own}) vs trained depth {trained}; "
        + learned_note(runs, [name])
    )
    return judge(text, reach > max(trained, at_own), measured, values)


def c1_control(runs: Runs, name: str, text: str) -> Part:
    """A control of C1's first part: it must not reach deeper than trained at its own R."""
    values = learned_values(runs, [LOOPED_RUN, name])
    if name in runs:
        values |= {"test_reach": reached(runs[name].accuracy("all_seen"), REACH_BAR)}
        values |= {"trained_depth": runs[name].trained_depth}
    why = blocked(runs, [LOOPED_RUN, name])
    if why:
        return not_judged(text, why, values)
    run = runs[name]
    measured = (
        f"{name} reaches {values['test_reach']} at its R = {run.own_r} vs trained depth {run.trained_depth}; "
        + learned_note(runs, [LOOPED_RUN, name])
    )
    return judge(text, values["test_reach"] <= run.trained_depth, measured, values)


def c1_oracle(runs: Runs) -> str:
    """The r the test set itself would choose: a diagnostic beside the claim, never its evidence."""
    readings = []
    for name in C1_LOOPED_MODELS:
        if name in runs:
            run = runs[name]
            r, reach = choose_r({r: run.accuracy("all_seen", r) for r in run.grid}, REACH_BAR)
            readings.append(f"{name} reaches {reach} at r = {r}")
    if not readings:
        return ""
    return "diagnostic, not evidence (r chosen on the test set, an oracle): " + "; ".join(readings)


# ------------------------------------------------------------------------------------------ C2
def claim_c2(runs: Runs) -> Claim:
    return C2.check([c2_frozen(runs), c2_learned(runs)], evidence(runs, [LOOPED_RUN, LEARNED_RUN]))


def c2_frozen(runs: Runs) -> Part:
    why = blocked(runs, [LOOPED_RUN])
    if why:
        return not_judged(C2_FROZEN, why, learned_values(runs, [LOOPED_RUN]))
    run = runs[LOOPED_RUN]
    # rounded so that 10 points read as 0.10 (0.8 − 0.7 is 0.10000000000000009 in floats)
    gaps = [round(s - u, 9) for s, u in zip(run.trained("all_seen"), run.trained("all_unseen"), strict=True)]
    close = all(abs(g) <= GAP_BAR for g in gaps)  # a missing depth (nan) fails
    seen = [Rate(a, n) for a, n in zip(run.trained("all_seen"), run.trained_n("all_seen"), strict=True)]
    unseen = [Rate(a, n) for a, n in zip(run.trained("all_unseen"), run.trained_n("all_unseen"), strict=True)]
    logged = all(r.n for r in seen + unseen)
    intervals = [difference(s, u) for s, u in zip(seen, unseen, strict=True)] if logged else []
    shown = (
        "; 95% CI per depth "
        + ", ".join(f"[{lo:.2f}, {hi:.2f}]" for lo, hi in intervals)
        + f" (n = {', '.join(str(s.n) for s in seen)})"
        if intervals
        else ""
    )
    measured = (
        f"all_seen − all_unseen per trained depth {rounded(gaps)}{shown} (bar |gap| ≤ {GAP_BAR}); "
        + learned_note(runs, [LOOPED_RUN])
    )
    noise = any(lo <= bar <= hi for lo, hi in intervals for bar in (-GAP_BAR, GAP_BAR))
    values = by_depth("gap", gaps) | {
        f"gap_depth{d} 95% CI": [round(x, 4) for x in ci] for d, ci in enumerate(intervals, 1)
    }
    return judge(C2_FROZEN, close, measured, values, noise)


def c2_learned(runs: Runs) -> Part:
    if LEARNED_RUN not in runs:
        return not_judged(C2_LEARNED, f"no run {LEARNED_RUN}")
    run = runs[LEARNED_RUN]
    seen, unseen = run.trained("all_seen"), run.trained("all_unseen")
    values = by_depth("all_unseen", unseen) | by_depth("all_seen", seen)
    why = blocked(runs, [LEARNED_RUN])
    if why:
        return not_judged(
            C2_LEARNED,
            f"{why}; its all_unseen {rounded(unseen)} (all_seen {rounded(seen)}) per trained depth: "
            "chance on unseen symbols would not be collapse alone",
            values,
        )
    note = learned_note(runs, [LEARNED_RUN])
    rates = [Rate(a, n) for a, n in zip(unseen, run.trained_n("all_unseen"), strict=True)]
    shown = ", ".join(r.shown() for r in rates) if all(r.n for r in rates) else str(rounded(unseen))
    measured = f"all_unseen per trained depth {shown} (bar ≤ {CHANCE_BAR}); {note}"
    noise = any(r.crosses(CHANCE_BAR) for r in rates)
    return judge(C2_LEARNED, all(a <= CHANCE_BAR for a in unseen), measured, values, noise)


# ------------------------------------------------------------------------------------------ C3
def claim_c3(runs: Runs) -> Claim:
    return C3.check([c3_part(runs, name) for name in C3_MODELS], evidence(runs, list(C3_MODELS)))


def c3_part(runs: Runs, name: str) -> Part:
    text = c3_text(name)
    why = blocked(runs, [name])
    if why:
        return not_judged(text, why, learned_values(runs, [name]))
    iters = runs[name].halting_iterations()
    if len(iters) < 2:
        return not_judged(text, f"{name} holds halting iterations at {len(iters)} depth(s); two are needed")
    depths = sorted(iters)
    rho = rank_correlation(depths, [iters[d] for d in depths])
    first, last = iters[depths[0]], iters[depths[-1]]
    values = by_depth("iterations", iters) | {"rank_correlation": round(rho, 4)}
    measured = (
        f"mean iterations {' '.join(f'{iters[d]:.1f}' for d in depths)} over depths {depths[0]}–{depths[-1]} "
        f"(rank correlation {rho:.2f}, bar > {RANK_BAR}; deepest {last:.1f} vs shallowest {first:.1f}); "
        + learned_note(runs, [name])
    )
    return judge(text, rho > RANK_BAR and last > first, measured, values)


def judge_all(runs: Runs) -> list[Claim]:
    return [claim_c1(runs), claim_c2(runs), claim_c3(runs)]
