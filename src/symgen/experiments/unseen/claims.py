"""The claims of paper A at the unseen-symbols experiment: A7.1–A7.5 (SPEC A7), their same-symbol
variants A7.1β–A7.4β, the paper's models trained with a supervised matching head, A7.1μ–A7.4μ, and with
the same-symbol term as a faded scaffold beside the taught head, A7.1σ–A7.4σ."""

from __future__ import annotations

import math
from typing import Any

from symgen.experiments.claims import Claim, Part, Statement, judge, not_judged, unlearned
from symgen.measures.intervals import Rate, difference

A71 = Statement(
    "A7.1",
    "A standard transformer is near-perfect on all_seen and fails on all_unseen.",
    "≈100% all_seen, ≈0% all_unseen",
)

A72 = Statement(
    "A7.2",
    "Copy attention + high diversity helps query_unseen but still fails all_unseen.",
    "qualitative",
)

A73 = Statement(
    "A7.3",
    "Copy attention + frozen or actively forgotten embeddings solves all_unseen.",
    "≈100% all_unseen",
)

A74 = Statement(
    "A7.4",
    "Temporary active forgetting holds only with copy attention.",
    "qualitative",
)

A75 = Statement(
    "A7.5",
    "Unseen unembeddings collapse under weight decay (cosine → 1), not when frozen; without decay on "
    "the rows their differences do not contract (the lemma's mechanism, read on their spread).",
    "cosine ≈ 1 vs ≈ 0 (paper); the spread part reads Lemma 4.1's mechanism (differences contract)",
)

A71B = Statement(
    "A7.1β",
    "Same-symbol variant: the standard transformer + β (learned rows, weight decay) is near-perfect "
    "on all_seen and still fails on all_unseen.",
    "A7.1 (the term must not fix collapsed rows)",
)

A72B = Statement(
    "A7.2β",
    "Same-symbol variant: copy attention + β helps query_unseen but still fails all_unseen.",
    "A7.2",
)

A73B = Statement(
    "A7.3β",
    "Same-symbol variant: copy attention + β with frozen or actively forgotten symbol rows solves "
    "all_unseen, in every seed.",
    "A7.3, ≈100% all_unseen",
)

A74B = Statement(
    "A7.4β",
    "Same-symbol variant: temporary active forgetting holds only with copy attention.",
    "A7.4",
)

STATEMENTS = (
    A71,
    A72,
    A73,
    A74,
    A75,
    A71B,
    A72B,
    A73B,
    A74B,
)

# Paper A's four sentences as the paper states them, judged again on the paper's models trained otherwise
PAPER_SENTENCES = (
    ("A7.1", "the standard transformer is near-perfect on all_seen and fails on all_unseen."),
    ("A7.2", "copy attention helps query_unseen but still fails all_unseen."),
    ("A7.3", "copy attention + frozen or actively forgotten embeddings solves all_unseen."),
    ("A7.4", "temporary active forgetting holds only with copy attention."),
)


def trained_variant_statements(symbol: str, prefix: str) -> tuple[Statement, ...]:
    """A7.1–A7.4 with `symbol` on their ids and `prefix` naming how the paper's model was trained."""
    return tuple(Statement(f"{cid}{symbol}", prefix + sentence, cid) for cid, sentence in PAPER_SENTENCES)


# The paper's models, trained with a supervised matching head (train.match_loss, the set
# `matching-head`): the architecture is the paper's, only the training signal gains a term until step
# 4000. Labelled rows of their own: the paper does not train with it.
MATCHING = "Matching-head variant (the paper's model, trained with a supervised matching head): "
MATCHING_STATEMENTS = trained_variant_statements("μ", MATCHING)

# The paper's models, trained with a scaffold and a taught head (the set `scaffold-head`): the
# same-symbol term as a scaffold whose weight falls to 0 by step 6000, and the matching head taught for
# the whole run. From step 6000 on the model is the paper's architecture; its training is not the paper's.
SCAFFOLD = (
    "Scaffold variant (the paper's model, trained with the same-symbol term faded to zero by step 6000 "
    "and a supervised matching head): "
)
SCAFFOLD_STATEMENTS = trained_variant_statements("σ", SCAFFOLD)

# bars, stated before the runs (SPEC A7 and "Judging the claims")
LEARNED = 0.9  # chain-of-thought Horn: all_seen exact match an arm needs before its part counts
FAILS = 0.1  # "fails on all_unseen": exact match at most this
SOLVES, SOLVES_GAP = 0.8, 0.1  # "solves all_unseen": at least this, and within the gap of all_seen
COLLAPSED, APART = 0.9, 0.1  # unseen-row mean cosine: collapsed at least this; apart within ± this
DIRECTIONAL = 0.05  # "helps": a difference smaller than this is not a direction
COSINE, SELF_NN = "collapse/unseen_out_mean_cos", "collapse/unseen_self_nn"
# A7.5's no-decay control: "the rows' differences did not contract" reads spread at least this share of
# fresh rows' (decay contracts it geometrically towards 0; the committed runs read about 0.1 with decay
# and 0.4-0.5 without, so the bar sits between the regimes, not at either's edge)
SPREAD_HELD = 0.25
# from the final weights (experiment.row_geometry): the unseen rows' spread and their mean row's norm,
# over the spread of fresh rows
SPREAD, DRIFT = "rows/unseen_out_spread_over_init", "rows/unseen_out_drift_over_init"

Finals = dict[str, dict[str, float]]  # method -> final metrics of its run (one seed)

LABELS = {
    "standard": "standard",
    "copy": "copy",
    "copy_frozen": "copy + frozen",
    "copy_forget": "copy + forgetting",
    "forget_temporary": "temporary forgetting",
    "copy_forget_temporary": "copy + temporary forgetting",
    "standard_no_decay": "standard, rows without weight decay",
    "copy_forget_temporary_full_row_lr": "copy + temporary forgetting, rows at the full learning rate",
}


# each variant's key suffix, its name in labels and its run names' suffix
VARIANTS = {
    "+β": ("same-symbol", "-same-symbol"),
    "+μ": ("matching head", "-matching-head"),
    "+σ": ("faded scaffold + matching head", "-scaffold-head"),
}


def split_variant(method: str) -> tuple[str, str]:
    """('copy_frozen', '+β') for 'copy_frozen+β'; ('copy', '') for the paper's own."""
    for key in VARIANTS:
        if method.endswith(key):
            return method.removesuffix(key), key
    return method, ""


def label(method: str) -> str:
    """A method's name in claims and tables: the paper's, with ' + same-symbol' for symgen's variant
    (its attention term β; A7.1β–A7.4β), ' + matching head' for the paper's model trained with one
    (A7.1μ–A7.4μ) or ' + faded scaffold + matching head' (A7.1σ–A7.4σ)."""
    base, variant = split_variant(method)
    return LABELS.get(base, base) + (f" + {VARIANTS[variant][0]}" if variant else "")


def run_name(method: str) -> str:
    """`unseen-copy-frozen-same-symbol`: hyphens, as the recipes are named."""
    base, variant = split_variant(method)
    return f"unseen-{base.replace('_', '-')}" + (VARIANTS[variant][1] if variant else "")


def em(final: dict[str, float], scenario: str, prefix: str = "eval/") -> float:
    return final.get(f"{prefix}{scenario}/exact_match", float("nan"))


def rate(final: dict[str, float], scenario: str, prefix: str = "eval/") -> Rate:
    """Exact match on a scenario with its n (the problems read; 0 where the run did not record it)."""
    return Rate(em(final, scenario, prefix), int(final.get(f"{prefix}{scenario}/n", 0)))


def _missing(finals: Finals, methods: list[str]) -> str:
    absent = [label(m) for m in methods if m not in finals]
    return f"no {' or '.join(absent)} run in this output" if absent else ""


def _unlearned(finals: Finals, methods: list[str]) -> str:
    arms = {label(m): em(finals[m], "all_seen") for m in methods}
    return unlearned(arms, LEARNED, "all_seen exact match: its seen task")


def _blocked(finals: Finals, methods: list[str]) -> str:
    """Why a part over these arms cannot be judged ("" when it can)."""
    return _missing(finals, methods) or _unlearned(finals, methods)


def _arm(finals: Finals, method: str, prefix: str = "eval/") -> dict[str, Any]:
    f = finals.get(method, {})
    out: dict[str, Any] = {}
    for s in ("all_seen", "query_unseen", "all_unseen"):
        out |= rate(f, s, prefix).as_values(f"{label(method)} {s}")
    return out


def _fmt(values: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.3f}" for k, v in values.items())


def a71(finals: Finals, method: str, statement: Statement) -> Claim:
    """A7.1 / A7.1β: near-perfect on all_seen, failing on all_unseen."""
    name = label(method)
    seen_part = f"{name}: near-perfect on all_seen (exact match ≥ {LEARNED:g})"
    fail_part = f"{name}: fails on all_unseen (exact match ≤ {FAILS:g}), once it learned all_seen"
    if method not in finals:
        why = _missing(finals, [method])
        return statement.check([not_judged(seen_part, why), not_judged(fail_part, why)], [run_name(method)])
    values = _arm(finals, method)
    seen, unseen = rate(finals[method], "all_seen"), rate(finals[method], "all_unseen")
    parts = [
        judge(seen_part, seen.value >= LEARNED, f"all_seen {seen.shown()}", values, seen.crosses(LEARNED))
    ]
    if blocked := _unlearned(finals, [method]):
        parts.append(not_judged(fail_part, f"{blocked}: failing on unseen symbols then says nothing", values))
    else:
        ok, noise = unseen.value <= FAILS, unseen.crosses(FAILS)
        parts.append(judge(fail_part, ok, f"all_unseen {unseen.shown()}", values, noise))
    return statement.check(parts, [run_name(method)])


def a72(finals: Finals, copy: str, standard: str, statement: Statement, n_seen: int | None) -> Claim:
    """A7.2 / A7.2β: copy heads help query_unseen over the standard model, and still fail all_unseen."""
    at = f" (n_seen = {n_seen})" if n_seen else ""
    helps = f"{label(copy)}{at} beats {label(standard)} on query_unseen by ≥ {DIRECTIONAL:g}"
    fails = f"{label(copy)}{at} still fails all_unseen (exact match ≤ {FAILS:g})"
    values = _arm(finals, copy) | _arm(finals, standard)
    parts: list[Part] = []
    if blocked := _blocked(finals, [copy, standard]):
        parts.append(not_judged(helps, blocked, values))
    else:
        c, s = rate(finals[copy], "query_unseen"), rate(finals[standard], "query_unseen")
        lo, hi = difference(c, s)
        measured = f"query_unseen {c.shown()} against {s.shown()} (difference 95% CI [{lo:.3f}, {hi:.3f}])"
        ok = c.value >= s.value + DIRECTIONAL
        parts.append(judge(helps, ok, measured, values, lo <= DIRECTIONAL <= hi))
    if blocked := _blocked(finals, [copy]):
        parts.append(not_judged(fails, blocked, values))
    else:
        unseen = rate(finals[copy], "all_unseen")
        ok, noise = unseen.value <= FAILS, unseen.crosses(FAILS)
        parts.append(judge(fails, ok, f"all_unseen {unseen.shown()}", values, noise))
    return statement.check(parts, [run_name(copy), run_name(standard)])


def _solves(finals: Finals, method: str, text: str, prefix: str = "eval/") -> Part:
    values = _arm(finals, method, prefix)
    if blocked := _blocked(finals, [method]):
        return not_judged(text, blocked, values)
    seen, unseen = rate(finals[method], "all_seen", prefix), rate(finals[method], "all_unseen", prefix)
    ok = unseen.value >= SOLVES and unseen.value >= seen.value - SOLVES_GAP
    measured = f"all_unseen {unseen.shown()} (all_seen {seen.shown()})"
    return judge(text, ok, measured, values, unseen.crosses(SOLVES))


def solve_bar() -> str:
    return f"all_unseen exact match ≥ {SOLVES:g} and within {SOLVES_GAP:g} of all_seen"


def a73(finals: Finals, frozen: str, forget: str, statement: Statement) -> Claim:
    """A7.3 / A7.3β on the models as training left them; the view that re-draws only the never-seen
    rows before the test (it needs to know which symbols are unseen) is a labelled diagnostic."""
    parts = [
        _solves(finals, frozen, f"{label(frozen)} solves all_unseen ({solve_bar()})"),
        _solves(finals, forget, f"{label(forget)}, as training left it, solves all_unseen ({solve_bar()})"),
    ]
    note = ""
    if forget in finals and "redrawn/all_unseen/exact_match" in finals[forget]:
        f = finals[forget]
        note = (
            f"diagnostic, not evidence: with only the never-seen rows re-drawn before the test (a test-time "
            f"repair that needs to know which symbols are unseen), {label(forget)} reads all_unseen "
            f"{em(f, 'all_unseen', 'redrawn/'):.3f} (all_seen {em(f, 'all_seen', 'redrawn/'):.3f}); "
            f"unseen-row cosine as trained {f.get(COSINE, float('nan')):.3f}"
        )
    return statement.check(parts, [run_name(frozen), run_name(forget)], note)


def a74(finals: Finals, with_copy: str, without: str, statement: Statement) -> Claim:
    """A7.4 / A7.4β: after the resets stop, temporary forgetting holds with copy heads, not without."""
    holds = f"{label(with_copy)}, as trained: all_unseen exact match ≥ {SOLVES:g} after the resets stopped"
    fails = f"{label(without)}, as trained: all_unseen exact match < {SOLVES:g} (it does not hold)"
    parts = []
    for method, text, want in ((with_copy, holds, True), (without, fails, False)):
        values = _arm(finals, method) | {
            f"{label(method)} unseen-row cosine": finals.get(method, {}).get(COSINE, float("nan"))
        }
        if blocked := _blocked(finals, [method]):
            parts.append(not_judged(text, blocked, values))
            continue
        unseen = rate(finals[method], "all_unseen")
        cosine = finals[method].get(COSINE, float("nan"))
        measured = f"all_unseen {unseen.shown()}, unseen-row cosine {cosine:.3f}"
        parts.append(judge(text, (unseen.value >= SOLVES) == want, measured, values, unseen.crosses(SOLVES)))
    return statement.check(parts, [run_name(with_copy), run_name(without)])


def _rows(finals: Finals, method: str) -> dict[str, Any]:
    f = finals.get(method, {})
    return {
        f"{label(method)} cosine": f.get(COSINE, float("nan")),
        f"{label(method)} self-NN": f.get(SELF_NN, float("nan")),
    }


def _geometry(finals: Finals, methods: list[str], text: str, test: Any) -> Part:
    """A part about the unseen rows' geometry, judged on the arms that learned their seen task."""
    present = [m for m in methods if m in finals]
    values = {k: v for m in present for k, v in (_rows(finals, m) | _arm(finals, m)).items()}
    learned = [m for m in present if em(finals[m], "all_seen") >= LEARNED]
    if not learned:
        why = _missing(finals, methods) if not present else _unlearned(finals, present)
        return not_judged(text, why, values)
    measured = "; ".join(
        f"{label(m)} cosine {finals[m].get(COSINE, float('nan')):.3f}, self-NN "
        f"{finals[m].get(SELF_NN, float('nan')):.3f}"
        for m in learned
    )
    skipped = [m for m in present if m not in learned]
    if skipped:
        measured += f" ({_unlearned(finals, skipped)}: left out)"
    if len(present) < len(methods):  # judged on the arms at hand: say which arm was not
        measured += f" ({_missing(finals, methods)}: not judged on it)"
    return judge(text, all(test(finals[m].get(COSINE, float("nan"))) for m in learned), measured, values)


def _spread(finals: Finals, method: str, text: str) -> Part:
    """A7.5's no-decay control, judged on the theory's mechanism: did the unseen rows' differences
    contract? (Their mean cosine also goes to 1 when a common vector grows past a spread that holds.)"""
    values = _rows(finals, method) | _arm(finals, method)
    if blocked := _blocked(finals, [method]):
        return not_judged(text, blocked, values)
    spread = finals[method].get(SPREAD, float("nan"))
    if math.isnan(spread):  # no final weights in this output to read the rows from
        return not_judged(
            text, f"no final weights of {label(method)} in this output: the spread is read from them"
        )
    drift = finals[method].get(DRIFT, float("nan"))
    cosine = finals[method].get(COSINE, float("nan"))
    values |= {f"{label(method)} spread": spread, f"{label(method)} drift": drift}
    measured = f"{label(method)} spread {spread:.2f} of fresh rows' (drift {drift:.2f}, cosine {cosine:.3f})"
    return judge(text, spread >= SPREAD_HELD, measured, values)


def a75(finals: Finals, statement: Statement) -> Claim:
    """A7.5: the unseen rows of models whose rows learn under weight decay collapse; frozen rows do not;
    without decay on the rows (the no-decay control) their differences do not contract, if decay is
    the cause (judged on the spread, SPEC A7.5). The self-nearest-neighbour fraction goes beside each
    cosine."""
    parts = [
        _geometry(
            finals,
            ["standard", "standard+β"],
            f"learned rows under weight decay collapse: unseen-row mean cosine ≥ {COLLAPSED:g}",
            lambda c: c >= COLLAPSED,
        ),
        _geometry(
            finals,
            ["copy_frozen", "copy_frozen+β"],
            f"frozen rows do not: |unseen-row mean cosine| < {APART:g}",
            lambda c: abs(c) < APART,
        ),
        _spread(
            finals,
            "standard_no_decay+β",
            "the collapse is weight decay's: without decay on the rows their differences do not contract, "
            f"spread (RMS distance to their mean row) ≥ {SPREAD_HELD:g} of fresh rows'",
        ),
    ]
    runs = ["standard", "standard+β", "copy_frozen", "copy_frozen+β", "standard_no_decay+β"]
    return statement.check(parts, [run_name(m) for m in runs if m in finals], _contraction_note(finals, runs))


def _contraction_note(finals: Finals, methods: list[str]) -> str:
    """What the cosine conflates, beside the parts: whether the unseen rows' differences contracted
    (the theory's mechanism, weight decay) or a common vector grew past them."""
    read = [
        f"{label(m)} spread {finals[m][SPREAD]:.2f}, drift {finals[m][DRIFT]:.2f}"
        for m in methods
        if SPREAD in finals.get(m, {})
    ]
    if not read:
        return ""
    return (
        "diagnostic, not evidence: the unseen rows' spread (RMS distance to their mean row) and common "
        "drift (their mean row's norm), both over the spread of fresh rows (fresh rows read spread 1, "
        "drift 1/√(n−1) for n unseen symbols): " + "; ".join(read)
    )


def scaled(statements: tuple[Statement, ...], scale: str) -> tuple[Statement, ...]:
    """The same claims judged at another scale, as rows of their own: `A7.3 (mid)`."""
    return tuple(Statement(f"{s.id} ({scale})", s.text, s.paper) for s in statements)


def check_all(
    finals: Finals, diversity: dict[int, dict[str, float]], statements: tuple[Statement, ...] = STATEMENTS
) -> list[Claim]:
    """Every claim of paper A at one seed: the paper's architecture, then symgen's variant, then (where
    `statements` go on with MATCHING_STATEMENTS and SCAFFOLD_STATEMENTS) the runs trained with a matching
    head and with the faded scaffold and the head. A7.2 reads the copy model trained on the most seen
    symbols ("high diversity"). `statements` are STATEMENTS (+ MATCHING_STATEMENTS + SCAFFOLD_STATEMENTS)
    or their `scaled` copies, in the same order."""
    a71s, a72s, a73s, a74s, a75s, a71b, a72b, a73b, a74b = statements[:9]
    most = max(diversity, default=None)
    at_most = finals | ({"copy": diversity[most]} if most is not None else {})
    return [
        a71(finals, "standard", a71s),
        a72(at_most, "copy", "standard", a72s, most),
        a73(finals, "copy_frozen", "copy_forget", a73s),
        a74(finals, "copy_forget_temporary", "forget_temporary", a74s),
        a75(finals, a75s),
        a71(finals, "standard+β", a71b),
        a72(finals, "copy+β", "standard+β", a72b, None),
        a73(finals, "copy_frozen+β", "copy_forget+β", a73b),
        a74(finals, "copy_forget_temporary+β", "forget_temporary+β", a74b),
    ] + [
        claim
        for key, four in zip(("+μ", "+σ"), (statements[9:13], statements[13:17]), strict=True)
        if four
        for claim in trained_variant_claims(finals, four, key)
    ]


def trained_variant_claims(finals: Finals, statements: tuple[Statement, ...], key: str) -> list[Claim]:
    """A7.1–A7.4 as the paper judges them, on the paper's models trained otherwise (the runs keyed
    `key`: '+μ' a matching head, '+σ' the faded scaffold and the head)."""
    a71v, a72v, a73v, a74v = statements
    return [
        a71(finals, f"standard{key}", a71v),
        a72(finals, f"copy{key}", f"standard{key}", a72v, None),
        a73(finals, f"copy_frozen{key}", f"copy_forget{key}", a73v),
        a74(finals, f"copy_forget_temporary{key}", f"forget_temporary{key}", a74v),
    ]
