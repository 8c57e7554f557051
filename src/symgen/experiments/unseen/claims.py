"""The claims of paper A at the unseen-symbols experiment: A7.1–A7.5 (SPEC A7) and their same-symbol
variants A7.1β–A7.4β."""

from __future__ import annotations

from symgen.experiments.claims import Claim, Statement, verdict_of
from symgen.experiments.types import Table

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
    "Unseen unembeddings collapse under weight decay (cosine → 1), not when frozen.",
    "cosine ≈ 1 vs ≈ 0",
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

# thresholds of the issue
A71_SEEN, A71_UNSEEN = 0.9, 0.1
A73_UNSEEN, A73_GAP = 0.8, 0.1
A75_COLLAPSED, A75_FROZEN = 0.9, 0.1
DIRECTIONAL = 0.05  # a difference smaller than this is not a direction
COSINE = "collapse/unseen_out_mean_cos"  # the collapse measure of claim A7.5


def _judged(
    statement: Statement, measured: str, ok: bool | dict[str, bool], evidence: list[str], values: dict
) -> Claim:
    """The claim with its verdict from `ok`: one outcome, or one per seed ("partly reproduced"
    naming the seeds where it fails)."""
    verdict, note = verdict_of(ok if isinstance(ok, dict) else {"": ok})
    measured += f" ({note})" if note else ""
    return statement.judged(measured, verdict, evidence, values)


BySeed = dict[str, dict[int, dict[str, float]]]  # method -> seed -> final metrics of that run


def _each_seed(seeds: list[int], passed: list[bool]) -> dict[str, bool]:
    return {f"seed {seed}": ok for seed, ok in zip(seeds, passed, strict=True)}


def _a71_per_seed(seeds: list[int], seen: list[float], unseen: list[float]) -> dict[str, bool]:
    """A7.1's test at every seed: near-perfect on all_seen, failing on all_unseen."""
    return _each_seed(seeds, [a >= A71_SEEN and u <= A71_UNSEEN for a, u in zip(seen, unseen, strict=True)])


def _per_seed(by_seed: BySeed, method: str, key: str) -> list[float]:
    return [f.get(key, float("nan")) for f in by_seed.get(method, {}).values()]


def _em(by_seed: BySeed, method: str, scenario: str, prefix: str = "eval/") -> list[float]:
    return _per_seed(by_seed, method, f"{prefix}{scenario}/exact_match")


def _fmt(values: list[float]) -> str:
    """Per-seed values, to 3 decimals: with 200 test problems a result sits on a 0.005 grid, and two
    decimals would show 0.895 as the 0.90 bar it misses."""
    return "/".join(f"{v:.3f}" for v in values) or "—"


def run_name(method: str, seed: int = 0) -> str:
    name = f"unseen-{method.replace('+β', '-ss')}"
    return name if seed == 0 else f"{name}-seed{seed}"


def paper_claims(finals: dict[str, dict[str, float]], by_seed: BySeed, diversity: Table) -> list[Claim]:
    """A7.1–A7.5, judged on the paper's architecture."""

    def em(method: str, scenario: str, prefix: str = "eval/") -> float:
        return finals[method].get(f"{prefix}{scenario}/exact_match", float("nan"))

    def ta(method: str, scenario: str, prefix: str = "eval/") -> float:
        return finals[method].get(f"{prefix}{scenario}/token_accuracy", float("nan"))

    claims = []
    s_seen, s_unseen = _em(by_seed, "standard", "all_seen"), _em(by_seed, "standard", "all_unseen")
    claims.append(
        _judged(
            A71,
            f"standard exact match: all_seen {_fmt(s_seen)}, all_unseen {_fmt(s_unseen)} "
            f"(per seed; needs >= {A71_SEEN:.2f} and <= {A71_UNSEEN:.2f}); token accuracy "
            f"{ta('standard', 'all_seen'):.2f} / {ta('standard', 'all_unseen'):.2f} (seed 0)",
            _a71_per_seed(list(by_seed["standard"]), s_seen, s_unseen),
            [run_name("standard")],
            {"standard_all_seen": s_seen, "standard_all_unseen": s_unseen},
        )
    )

    # A7.2: copy at the highest diversity beats the standard model on query_unseen, fails all_unseen
    best = diversity.rows[-1]
    n_best, qu_best, au_best = best[0], best[2], best[3]
    s_qu = em("standard", "query_unseen")
    claims.append(
        _judged(
            A72,
            f"copy at n_seen={n_best}: query_unseen {qu_best:.2f} vs standard {s_qu:.2f}; "
            f"all_unseen {au_best:.2f}",
            qu_best >= s_qu + DIRECTIONAL and au_best <= A71_UNSEEN,
            ["unseen-copy", "unseen-copy-seen*", "unseen-standard"],
            {"copy_query_unseen": qu_best, "standard_query_unseen": s_qu, "copy_all_unseen": au_best},
        )
    )

    def solves(method: str, prefix: str) -> tuple[bool, float, float]:
        seen, unseen = em(method, "all_seen", prefix), em(method, "all_unseen", prefix)
        return unseen >= A73_UNSEEN and unseen >= seen - A73_GAP, seen, unseen

    frozen_ok, f_seen, f_unseen = solves("copy_frozen", "eval/")
    forget_ok, g_seen, g_unseen = solves("copy_forget", "redrawn/")
    _, t_seen, t_unseen = solves("copy_forget", "eval/")
    claims.append(
        _judged(
            A73,
            f"copy+frozen: all_unseen {f_unseen:.2f} (all_seen {f_seen:.2f}); copy+forgetting, rows "
            f"re-drawn: {g_unseen:.2f} ({g_seen:.2f}), rows as trained: {t_unseen:.2f} ({t_seen:.2f}) "
            f"(needs >= {A73_UNSEEN:.2f} and within {A73_GAP:.2f} of all_seen); all_unseen token "
            f"accuracy: frozen {ta('copy_frozen', 'all_unseen'):.2f}, forgetting re-drawn "
            f"{ta('copy_forget', 'all_unseen', 'redrawn/'):.2f}, "
            f"as trained {ta('copy_forget', 'all_unseen'):.2f}",
            frozen_ok and forget_ok,
            ["unseen-copy_frozen", "unseen-copy_forget"],
            {
                "frozen_all_seen": f_seen,
                "frozen_all_unseen": f_unseen,
                "forget_redrawn_all_seen": g_seen,
                "forget_redrawn_all_unseen": g_unseen,
                "forget_as_trained_all_unseen": t_unseen,
            },
        )
    )

    if "copy_forget_temporary" in finals and "forget_temporary" in finals:
        c_tmp, s_tmp = em("copy_forget_temporary", "all_unseen"), em("forget_temporary", "all_unseen")
        claims.append(
            _judged(
                A74,
                f"temporary forgetting, all_unseen after the resets stopped: "
                f"with copy {c_tmp:.2f}, without {s_tmp:.2f} (token accuracy "
                f"{ta('copy_forget_temporary', 'all_unseen'):.2f} "
                f"vs {ta('forget_temporary', 'all_unseen'):.2f})",
                c_tmp >= s_tmp + DIRECTIONAL,
                ["unseen-copy_forget_temporary", "unseen-forget_temporary"],
                {"with_copy_all_unseen": c_tmp, "without_copy_all_unseen": s_tmp},
            )
        )
    else:
        note = "the paper's architecture without same-symbol attention is not run in this suite (A7.4β is)"
        claims.append(A74.judged(note, "not run"))

    s_cos = _per_seed(by_seed, "standard", COSINE)
    f_cos = finals["copy_frozen"].get(COSINE, float("nan"))
    claims.append(
        _judged(
            A75,
            f"unseen-row mean cosine: standard {_fmt(s_cos)}, frozen "
            f"{f_cos:.3f} (needs >= {A75_COLLAPSED:.2f} and < {A75_FROZEN:.2f})",
            all(c >= A75_COLLAPSED for c in s_cos) and abs(f_cos) < A75_FROZEN,
            ["unseen-standard", "unseen-copy_frozen"],
            {"standard_unseen_cosine": s_cos, "frozen_unseen_cosine": f_cos},
        )
    )
    return claims


def same_symbol_claims(by_seed: BySeed) -> list[Claim]:
    """A7.1β-A7.4β: the paper's claims for symgen's same-symbol variant, on every seed run."""

    def em(method: str, scenario: str, prefix: str = "eval/") -> list[float]:
        return _em(by_seed, method, scenario, prefix)

    if "standard+β" not in by_seed:
        return []
    claims = []
    s_seen, s_unseen = em("standard+β", "all_seen"), em("standard+β", "all_unseen")
    claims.append(
        _judged(
            A71B,
            f"standard + β exact match: all_seen {_fmt(s_seen)}, all_unseen {_fmt(s_unseen)} "
            f"(needs >= {A71_SEEN:.2f} and <= {A71_UNSEEN:.2f})",
            _a71_per_seed(list(by_seed["standard+β"]), s_seen, s_unseen),
            [run_name("standard+β")],
            {"all_seen": s_seen, "all_unseen": s_unseen},
        )
    )
    c_qu, c_au = em("copy+β", "query_unseen"), em("copy+β", "all_unseen")
    s_qu = em("standard+β", "query_unseen")
    claims.append(
        _judged(
            A72B,
            f"copy + β: query_unseen {_fmt(c_qu)} vs standard + β {_fmt(s_qu)}; all_unseen {_fmt(c_au)}",
            bool(c_qu) and min(c_qu) >= max(s_qu) + DIRECTIONAL and all(v <= A71_UNSEEN for v in c_au),
            [run_name("copy+β"), run_name("standard+β")],
            {"copy_query_unseen": c_qu, "standard_query_unseen": s_qu, "copy_all_unseen": c_au},
        )
    )
    parts, ok, values = [], None, {}
    views = (("copy_frozen+β", "eval/", ""), ("copy_forget+β", "redrawn/", ", rows re-drawn"))
    for method, prefix, view in views:
        seen, unseen = em(method, "all_seen", prefix), em(method, "all_unseen", prefix)
        solved = [u >= A73_UNSEEN and u >= s - A73_GAP for s, u in zip(seen, unseen, strict=True)]
        ok = solved if ok is None else [a and b for a, b in zip(ok, solved, strict=True)]
        label = method.removesuffix("+β")
        values |= {f"{label}_all_seen": seen, f"{label}_all_unseen": unseen}
        parts.append(f"{label} + β{view}: all_unseen {_fmt(unseen)} (all_seen {_fmt(seen)})")
    as_trained = em("copy_forget+β", "all_unseen")
    claims.append(
        _judged(
            A73B,
            "; ".join(parts) + f"; forgetting as trained: all_unseen {_fmt(as_trained)} (per seed; needs >= "
            f"{A73_UNSEEN:.2f} and within {A73_GAP:.2f} of all_seen in every seed)",
            _each_seed(list(by_seed.get("copy_frozen+β", {})), ok or []),
            [run_name("copy_frozen+β"), run_name("copy_forget+β")],
            values | {"copy_forget_as_trained_all_unseen": as_trained},
        )
    )
    c_tmp, s_tmp = em("copy_forget_temporary+β", "all_unseen"), em("forget_temporary+β", "all_unseen")
    if c_tmp and s_tmp:
        claims.append(
            _judged(
                A74B,
                "temporary forgetting + β, all_unseen after the resets stopped: with copy "
                f"{_fmt(c_tmp)}, without {_fmt(s_tmp)}; unseen-row cosine at the end: with copy "
                f"{_fmt(_per_seed(by_seed, 'copy_forget_temporary+β', COSINE))}, without "
                f"{_fmt(_per_seed(by_seed, 'forget_temporary+β', COSINE))}",
                min(c_tmp) >= max(s_tmp) + DIRECTIONAL,
                [run_name("copy_forget_temporary+β"), run_name("forget_temporary+β")],
                {"with_copy_all_unseen": c_tmp, "without_copy_all_unseen": s_tmp},
            )
        )
    return claims
