"""The claim of learnable depth: B5.3 (SPEC B5), judged under two training protocols.

- **equal compute**: every run gets the same budget of layer passes (blocks × R per step, summed), so
  R = 8 takes an eighth of R = 1's steps, and ends early when its curriculum stalls;
- **until the curriculum stalls**: every run trains until no stage passes for the recipe's patience
  (how the paper trains), with a cap on the layer passes so a run always ends.

Under each, the learnable depth must grow over the fixed R and the dynamic-R model must reach the best
fixed R. A run counts only once it passed 2 hops (learnable depth >= LEARNED_DEPTH); one below makes
the part `not judged`, naming the run, and so does a run of the protocol that the output lacks (`--runs`
left it out): the runs present cannot stand for "every fixed R".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from symgen.experiments.claims import Claim, Part, Statement, judge, left_out, not_judged, unlearned

B53 = Statement(
    "B5.3",
    "Learnable depth grows with training R.",
    "R = 1→2, 2→6, 3→9, 4→10, 5→12, 6→13, 7→16, 8→16, dynamic → 22 hops",
)

STATEMENTS = (B53,)

LEARNED_DEPTH = 2  # a depth-curriculum run counts once it passed 2 hops
LEARNED_WHAT = "learnable depth: the run never passed 2 hops, its own first stage"
EQUAL, STALL = "equal compute", "until the curriculum stalls"
# each part's bar for the runs it compares, stated in its text
COUNTS = (
    "learnable depth: the deepest k whose held-out k-hop accuracy reached the curriculum threshold "
    f"(task.curriculum_threshold); a run counts once it passed 2 hops (learnable depth ≥ {LEARNED_DEPTH})"
)
PROTOCOLS = (EQUAL, STALL)


@dataclass
class DepthRun:
    """What B5.3 reads of one depth-curriculum run."""

    name: str
    protocol: str  # EQUAL or STALL
    loops: int  # R (a dynamic run: the largest of its range)
    dynamic: bool
    depth: int  # learnable depth (0: 2 hops never passed)
    budget: int | None  # train.budget_layer_passes (None: no budget)
    stopped_by: str


def protocol_label(protocol: str, runs: list[DepthRun]) -> str:
    """The protocol and its budget or cap, as the part's text states it (the same on every seed)."""
    if not runs:
        return protocol
    budgets = sorted({r.budget for r in runs if r.budget is not None})
    amount = " / ".join(f"{b:,}" for b in budgets)
    if protocol == EQUAL:
        return f"{EQUAL} ({amount} layer passes each)" if budgets else EQUAL
    return f"{STALL} (cap {amount} layer passes)" if budgets else f"{STALL} (capped by steps only)"


def _learned(runs: list[DepthRun]) -> str:
    return unlearned({r.name: r.depth for r in runs}, LEARNED_DEPTH, LEARNED_WHAT)


def _capped(runs: list[DepthRun], protocol: str) -> str:
    """Under the stall protocol, the runs that hit the cap before stalling: their depth is a floor."""
    capped = [r.name for r in runs if protocol == STALL and not r.stopped_by.startswith("curriculum")]
    return f"; ended by the cap, not a stall: {', '.join(capped)}" if capped else ""


def grows_part(protocol: str, runs: list[DepthRun], absent: Sequence[DepthRun] = ()) -> Part:
    fixed = sorted((r for r in runs if not r.dynamic), key=lambda r: r.loops)
    text = (
        f"{protocol_label(protocol, runs)}: learnable depth does not decrease from one fixed R to the next, "
        f"and the largest R's exceeds the smallest R's; {COUNTS}"
    )
    values = {f"R{r.loops}": r.depth for r in fixed}
    if part := left_out(text, [r.name for r in absent if not r.dynamic], values):
        return part
    if len(fixed) < 2:
        return not_judged(text, f"fewer than two fixed-R runs trained {protocol}")
    if why := _learned(fixed):
        return not_judged(text, why, values)
    depths = [r.depth for r in fixed]
    ok = all(a <= b for a, b in zip(depths, depths[1:], strict=False)) and depths[-1] > depths[0]
    measured = ", ".join(f"R = {r.loops}→{r.depth}" for r in fixed) + _capped(fixed, protocol)
    return judge(text, ok, measured, values)


def dynamic_part(protocol: str, runs: list[DepthRun], absent: Sequence[DepthRun] = ()) -> Part:
    fixed = [r for r in runs if not r.dynamic]
    dynamic = next((r for r in runs if r.dynamic), None)
    text = (
        f"{protocol_label(protocol, runs)}: the dynamic-R model reaches at least the best fixed R's "
        f"learnable depth; {COUNTS}"
    )
    values = {r.name: r.depth for r in runs}
    if part := left_out(text, [r.name for r in absent], values):  # the best fixed R needs every fixed R
        return part
    if dynamic is None or not fixed:
        return not_judged(text, f"no dynamic-R run, or no fixed-R run, trained {protocol}")
    best = max(fixed, key=lambda r: (r.depth, -r.loops))
    values = {"dynamic": dynamic.depth, "best_fixed": best.depth, "best_fixed_R": best.loops}
    if why := _learned([dynamic, best]):
        return not_judged(text, why, values)
    measured = f"dynamic → {dynamic.depth} against R = {best.loops}→{best.depth}" + _capped(
        [dynamic, best], protocol
    )
    return judge(text, dynamic.depth >= best.depth, measured, values)


def check_b53(runs: list[DepthRun], evidence: list[str], absent: Sequence[DepthRun] = ()) -> Claim:
    """B5.3: two parts under each protocol; a protocol the suite did not train reads `not judged`, and
    so does a part one of whose protocol's runs is `absent` (the suite has it, the output lacks it)."""
    parts = []
    for protocol in PROTOCOLS:
        under = [r for r in runs if r.protocol == protocol]
        missing = [r for r in absent if r.protocol == protocol]
        parts += [grows_part(protocol, under, missing), dynamic_part(protocol, under, missing)]
    note = (
        "The paper's sentence needs the second protocol: the paper trains each R until its curriculum "
        "stalls. Equal compute asks whether more iterations pay for their cost."
    )
    return B53.check(parts, evidence, note)
