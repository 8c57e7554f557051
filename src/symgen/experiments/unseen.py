"""Paper A: reasoning over unseen symbols (SPEC A1-A4, claims A7.1-A7.5).

Two families of methods on the same Horn-clause task:

- the paper's architecture: standard, copy head, copy + frozen (un)embeddings, copy + active
  forgetting, temporary active forgetting without and with copy heads;
- symgen's same-symbol variant: the same methods with `model.identity_bias` (every attention head
  adds β_h · cos(e_i, e_j) of the raw embedding rows of query and key token, when both are symbols:
  `model.identity_bias_scope=symbols`) and interventions on the symbol rows only
  (`train.intervention_rows=symbols`). At d = 64, fixed random rows give the
  heads no cheap identity test, so the membership check "is every body atom of this rule known?"
  is never learned over rows the model cannot shape; the term gives it for any pair of rows that are
  not collapsed. Its claims are A7.1β-A7.4β, judged on every seed run.

The analysis writes the method x scenario table, collapse curves beside unseen accuracy over
training, the diversity curve, and the claims.

Evaluation protocol for active forgetting (SPEC A3): every evaluation reports the rows as training
left them (`eval/*`) and, on a copy of the model, the unseen rows re-drawn from the initialization
as a reset leaves them (`redrawn/*`). Claim A7.3 judges the forgetting run on the re-drawn view
(the state the method keeps the rows in) and states both.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from symgen.analysis.plots import histogram_figure, line_figure
from symgen.experiments.claims import PAPER_CLAIMS, Claim, verdict_of
from symgen.experiments.suite import Experiment, RunSpec, Section, Table
from symgen.measures.collapse import pairwise_cosines
from symgen.measures.metrics import curve, read_metrics
from symgen.tasks.horn import SCENARIOS
from symgen.tasks.horn_text import TARGET_ROLES
from symgen.training.build import load_run
from symgen.training.run_dir import read_summary

SAME_SYMBOL = [
    "model.identity_bias=3.0",
    "model.identity_bias_scope=symbols",
    "train.intervention_rows=symbols",
]


@dataclass(frozen=True)
class Method:
    recipe: str
    same_symbol: bool = False  # symgen's variant: SAME_SYMBOL added to the recipe

    def overrides(self) -> list[str]:
        return list(SAME_SYMBOL) if self.same_symbol else []


PAPER_METHODS = {
    "standard": "horn-standard",
    "copy": "horn-copy",
    "copy_frozen": "horn-copy-frozen",
    "copy_forget": "horn-copy-forget",
    "forget_temporary": "horn-forget-temporary",
    "copy_forget_temporary": "horn-copy-forget-temporary",
}
METHODS = {m: Method(r) for m, r in PAPER_METHODS.items()} | {
    f"{m}+β": Method(r, same_symbol=True) for m, r in PAPER_METHODS.items()
}
# methods a suite leaves out (the quick suite's time budget), and seeds beyond 0 for the claims
SKIPPED = {"quick": {"forget_temporary", "copy_forget_temporary"}}
EXTRA_SEEDS = {
    "quick": {"standard": [1], "standard+β": [1], "copy_frozen+β": [1], "copy_forget+β": [1]},
}
# a suite's settings for one method (quick: standard + β passes all_seen 0.9 near step 6000, while the
# standard model's rule-choice plateau ends anywhere from step 3500 to 11000, or never (seed 2, even
# with a size curriculum), so it keeps its 12000)
METHOD_OVERRIDES = {"quick": {"standard+β": ["train.steps=8000"]}}
DIVERSITY = {"smoke": [12], "quick": [], "paper": [26, 100, 10000]}
MAIN_SEEN = {"smoke": 20, "quick": 200, "paper": 1000}

SMOKE = [
    "task.n_seen=20",
    "task.n_unseen=12",
    "task.min_rules=2",
    "task.max_rules=3",
    "task.min_facts=2",
    "task.max_facts=2",
    "task.max_depth=1",
    "task.n_test=6",
    "task.max_new_tokens=16",
    "model.d_model=32",
    "model.n_heads=2",
    "model.n_layers=4",
    "train.batch_size=8",
    "train.steps=12",
    "train.warmup_steps=2",
    "train.eval_every=12",
    "train.checkpoint_every=12",
    "train.forget_every=4",
    "train.forget_until=8",
]
PAPER_HORN_SIZES = [  # SPEC A1's paper-scale problems
    "task.n_seen=1000",
    "task.min_rules=8",
    "task.max_rules=16",
    "task.min_facts=3",
    "task.max_facts=8",
    "task.max_body=3",
    "task.max_depth=6",
]
PAPER = [
    *PAPER_HORN_SIZES,
    "task.n_test=1000",
    "task.eval_batch_size=500",
    "model.d_model=768",
    "model.n_heads=12",
    "model.n_layers=10",
    "train.batch_size=256",
    "train.lr=0.0003",
    "train.steps=30000",
    "train.warmup_steps=1000",
    "train.eval_every=1000",
    "train.checkpoint_every=2000",
    "train.forget_until=15000",
]

# thresholds of the issue
A71_SEEN, A71_UNSEEN = 0.9, 0.1
A73_UNSEEN, A73_GAP = 0.8, 0.1
A75_COLLAPSED, A75_FROZEN = 0.9, 0.1
DIRECTIONAL = 0.05  # a difference smaller than this is not a direction
COSINE = "collapse/unseen_out_mean_cos"  # the collapse measure of claim A7.5


def _suite_overrides(suite: str, recipe: str) -> list[str]:
    if suite == "smoke":
        out = list(SMOKE)
        if "forget" not in recipe:
            out = [o for o in out if not o.startswith("train.forget")]
        elif "temporary" not in recipe:
            out = [o for o in out if not o.startswith("train.forget_until")]
        return out
    if suite == "paper":
        out = list(PAPER)
        if "temporary" not in recipe:
            out = [o for o in out if not o.startswith("train.forget_until")]
        return out
    return []


def _final(run_dir: Path) -> dict[str, float]:
    return read_summary(run_dir)["final"]


def _judged(cid: str, measured: str, ok: bool | dict[str, bool], evidence: list[str], values: dict) -> Claim:
    """Claim `cid` of PAPER_CLAIMS with its verdict from `ok`: one outcome, or one per seed
    ("partly reproduced" naming the seeds where it fails)."""
    text, paper = PAPER_CLAIMS[cid]
    verdict, note = verdict_of(ok if isinstance(ok, dict) else {"": ok})
    measured += f" ({note})" if note else ""
    return Claim(cid, text, paper, measured, verdict, evidence, values)


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


def methods(suite: str) -> list[str]:
    return [m for m in METHODS if m not in SKIPPED.get(suite, set())]


def seeds(suite: str, method: str) -> list[int]:
    return [0, *EXTRA_SEEDS.get(suite, {}).get(method, [])]


def method_runs(suite: str) -> list[RunSpec]:
    """Every method of the suite at each of its seeds."""
    specs = []
    for m in methods(suite):
        method = METHODS[m]
        for seed in seeds(suite, m):
            extra = [f"seed={seed}"] if seed else []
            overrides = _suite_overrides(suite, method.recipe) + method.overrides() + extra
            overrides += METHOD_OVERRIDES.get(suite, {}).get(m, [])
            specs.append(RunSpec(run_name(m, seed), method.recipe, overrides))
    return specs


class UnseenSymbolsExperiment(Experiment):
    name = "unseen"
    title = "Paper A: reasoning over unseen symbols"

    def runs(self, suite: str) -> list[RunSpec]:
        specs = method_runs(suite)
        for n_seen in DIVERSITY.get(suite, []):
            recipe = PAPER_METHODS["copy"]
            specs.append(
                RunSpec(
                    f"unseen-copy-seen{n_seen}",
                    recipe,
                    _suite_overrides(suite, recipe) + [f"task.n_seen={n_seen}"],
                )
            )
        return specs

    # ------------------------------------------------------------------ analysis
    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        finals = {m: _final(run_dirs[run_name(m)]) for m in methods(suite)}
        records = {m: read_metrics(run_dirs[run_name(m)]) for m in methods(suite)}
        by_seed = {
            m: {seed: _final(run_dirs[run_name(m, seed)]) for seed in seeds(suite, m)} for m in methods(suite)
        }
        table, details = self._table(finals)
        roles = self._role_table(finals)
        figures = self._figures(records, figure_dir)
        diversity, div_figure = self._diversity(suite, run_dirs, finals["copy"], figure_dir)
        figures.append(div_figure)
        if all((run_dirs[run_name(m)] / "final.safetensors").exists() for m in methods(suite)):
            figures.append(self._cosine_histogram(run_dirs, figure_dir))
        claims = self._claims(finals, by_seed, diversity) + self._same_symbol_claims(by_seed)
        text = [
            "Same-symbol attention (methods marked +β; symgen's variant, not the paper's): every attention "
            "head adds β_h · cos(e_i, e_j) to its score, where e_i and e_j are the raw embedding rows of the "
            "query and key tokens when both are symbols (model.identity_bias_scope=symbols; other pairs "
            "score 0) and β_h starts at 3 and is learned (model.identity_bias); frozen and "
            "forgotten rows are then the symbols' rows only. It is needed at this scale because choosing a "
            "rule means checking that every body atom is already known, a match of two positions holding "
            "the same symbol: the paper's 60-75M-parameter models learn such heads over fixed random rows, "
            "while at d = 64 the paper's copy + frozen model stays near chance on rule choice (see the role "
            "table and the ablation). On collapsed rows (learned rows under weight decay) the cosine is "
            "close to 1 for every pair of unseen symbols, so the term cannot tell them apart: the standard "
            "+ β control must still fail on all_unseen.",
            "Every rule of a problem starts with a label token and every proof step with the label of the "
            "rule it fires (task.rule_labels): choosing the rule is the reasoning, and the rest of the step "
            "copies the atoms of that rule, seen or unseen, out of the context.",
            "Greedy decoding with the KV cache on held-out problems of each scenario; exact match = the "
            "whole chain of thought (labels included) and answer equal the reference; proof valid = the "
            "generated proof checks out and the answer is right; token acc = teacher-forced next-token "
            "accuracy on the reference chain of thought and answer. Runs with active forgetting are also "
            "evaluated with the unseen rows re-drawn from the initialization just before the test (rows "
            "'re-drawn').",
            "Unseen-row cosine: mean pairwise cosine of the unseen symbols' unembedding rows at the end "
            "of training; self-NN: fraction of unseen symbols whose best-scoring unseen unembedding row "
            "(dot product with its own embedding) is its own. Atoms in prompt / seen pool: of the symbols "
            "the model writes on all_unseen problems, the fraction copied from the problem and the "
            "fraction that are seen symbols (a model that cannot copy unseen symbols replaces them).",
        ]
        return Section(self.title, text, figures, [table, details, diversity, roles], claims)

    def _table(self, finals: dict[str, dict[str, float]]) -> tuple[Table, Table]:
        """Two tables (one would be too wide to read): outcomes per scenario, then diagnostics."""
        outcome_headers = ["method", "view"] + [f"{s} exact" for s in SCENARIOS]
        outcome_headers += [f"{s} answer" for s in SCENARIOS] + ["unseen-row cosine", "self-NN"]
        detail_headers = ["method", "view"] + [f"{s} token acc" for s in SCENARIOS]
        detail_headers += [
            "all_unseen proof valid",
            "all_unseen atoms in prompt",
            "all_unseen atoms seen pool",
        ]
        outcomes, details = [], []
        for method, final in finals.items():
            views = [("as trained", "eval/")]
            if "redrawn/all_seen/exact_match" in final:
                views.append(("re-drawn", "redrawn/"))
            for view, prefix in views:
                row: list[object] = [method, view]
                row += [final.get(f"{prefix}{s}/exact_match", float("nan")) for s in SCENARIOS]
                row += [final.get(f"{prefix}{s}/answer_accuracy", float("nan")) for s in SCENARIOS]
                trained = view == "as trained"
                row.append(final.get("collapse/unseen_out_mean_cos", float("nan")) if trained else "")
                row.append(final.get("collapse/unseen_self_nn", float("nan")) if trained else "")
                outcomes.append(row)
                detail: list[object] = [method, view]
                detail += [final.get(f"{prefix}{s}/token_accuracy", float("nan")) for s in SCENARIOS]
                detail += [
                    final.get(f"{prefix}all_unseen/{k}", float("nan"))
                    for k in ("proof_valid", "atoms_in_prompt", "atoms_seen_pool")
                ]
                details.append(detail)
        return (
            Table(
                outcome_headers,
                outcomes,
                "Final evaluation per method and test scenario (fractions of problems).",
            ),
            Table(
                detail_headers,
                details,
                "Teacher-forced token accuracy, proof validity and where atoms come from.",
            ),
        )

    @staticmethod
    def _role_table(finals: dict[str, dict[str, float]]) -> Table:
        rows = [
            [method, scenario]
            + [final.get(f"eval/{scenario}/token_accuracy/{role}", float("nan")) for role in TARGET_ROLES]
            for method, final in finals.items()
            for scenario in ("all_seen", "all_unseen")
        ]
        return Table(
            ["method", "scenario", *TARGET_ROLES],
            rows,
            "Where the chain of thought goes wrong: teacher-forced accuracy per role of the target token "
            "(rule: the label of the rule that fires next; first_atom: its first body atom (which rule "
            "fires, when rules are not labelled); next_atom: the rest of its body; head: the conclusion "
            "copied after '->'; answer: True/False; syntax: '->', '.', '<ans>', '<eos>').",
        )

    def _figures(self, records: dict[str, list[dict]], figure_dir: Path) -> list[Path]:
        cos = {m: curve(r, "collapse/unseen_out_mean_cos") for m, r in records.items()}
        nn = {m: curve(r, "collapse/unseen_self_nn") for m, r in records.items()}
        acc = {m: curve(r, "eval/all_unseen/exact_match") for m, r in records.items()}
        seen = {m: curve(r, "eval/all_seen/exact_match") for m, r in records.items()}
        out = [
            line_figure(
                figure_dir / "unseen_collapse_cosine.png",
                cos,
                "training step",
                "mean pairwise cosine",
                "Unseen unembedding rows: mean pairwise cosine",
                ylim=(-0.05, 1.02),
            ),
            line_figure(
                figure_dir / "unseen_self_nn.png",
                nn,
                "training step",
                "fraction",
                "Unseen rows that are their own best-scoring unseen row",
                ylim=(-0.02, 1.02),
            ),
            line_figure(
                figure_dir / "unseen_all_unseen_accuracy.png",
                acc,
                "training step",
                "exact match",
                "all_unseen exact match during training",
                ylim=(-0.02, 1.02),
            ),
            line_figure(
                figure_dir / "unseen_all_seen_accuracy.png",
                seen,
                "training step",
                "exact match",
                "all_seen exact match during training",
                ylim=(-0.02, 1.02),
            ),
        ]
        return out

    def _cosine_histogram(self, run_dirs: dict[str, Path], figure_dir: Path) -> Path:
        """Distribution of the pairwise cosines of the unseen unembedding rows at the end."""
        series = {}
        for method in ("standard", "copy_frozen", "standard+β", "copy_frozen+β", "copy_forget+β"):
            if not (run_dirs[run_name(method)] / "final.safetensors").exists():
                continue
            _, task, model = load_run(run_dirs[run_name(method)])
            series[method] = pairwise_cosines(model.unembedding[task.unseen_ids()]).tolist()
        return histogram_figure(
            figure_dir / "unseen_cosine_histogram.png",
            {"unseen unembedding rows, end of training": series},
            "pairwise cosine",
            bins=40,
        )

    def _diversity(
        self, suite: str, run_dirs: dict[str, Path], main_copy: dict[str, float], figure_dir: Path
    ) -> tuple[Table, Path]:
        points = {MAIN_SEEN[suite]: main_copy}
        for n_seen in DIVERSITY.get(suite, []):
            points[n_seen] = _final(run_dirs[f"unseen-copy-seen{n_seen}"])
        ns = sorted(points)
        series = {
            s: (ns, [points[n].get(f"eval/{s}/exact_match", float("nan")) for n in ns]) for s in SCENARIOS
        }
        figure = line_figure(
            figure_dir / "unseen_diversity.png",
            series,
            "seen symbols in training (n_seen)",
            "exact match",
            "Copy heads: accuracy against data diversity",
            ylim=(-0.02, 1.02),
        )
        rows = [[n] + [points[n].get(f"eval/{s}/exact_match", float("nan")) for s in SCENARIOS] for n in ns]
        table = Table(
            ["n_seen"] + [f"{s} exact" for s in SCENARIOS], rows, "Copy heads at several diversities."
        )
        return table, figure

    def _claims(self, finals: dict[str, dict[str, float]], by_seed: BySeed, diversity: Table) -> list[Claim]:
        def em(method: str, scenario: str, prefix: str = "eval/") -> float:
            return finals[method].get(f"{prefix}{scenario}/exact_match", float("nan"))

        def ta(method: str, scenario: str, prefix: str = "eval/") -> float:
            return finals[method].get(f"{prefix}{scenario}/token_accuracy", float("nan"))

        claims = []
        s_seen, s_unseen = _em(by_seed, "standard", "all_seen"), _em(by_seed, "standard", "all_unseen")
        claims.append(
            _judged(
                "A7.1",
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
                "A7.2",
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
                "A7.3",
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
                    "A7.4",
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
            text, paper = PAPER_CLAIMS["A7.4"]
            note = (
                "the paper's architecture without same-symbol attention is not run in this suite (A7.4β is)"
            )
            claims.append(Claim("A7.4", text, paper, note, "not run", []))

        s_cos = _per_seed(by_seed, "standard", COSINE)
        f_cos = finals["copy_frozen"].get(COSINE, float("nan"))
        claims.append(
            _judged(
                "A7.5",
                f"unseen-row mean cosine: standard {_fmt(s_cos)}, frozen "
                f"{f_cos:.3f} (needs >= {A75_COLLAPSED:.2f} and < {A75_FROZEN:.2f})",
                all(c >= A75_COLLAPSED for c in s_cos) and abs(f_cos) < A75_FROZEN,
                ["unseen-standard", "unseen-copy_frozen"],
                {"standard_unseen_cosine": s_cos, "frozen_unseen_cosine": f_cos},
            )
        )
        return claims

    def _same_symbol_claims(self, by_seed: BySeed) -> list[Claim]:
        """A7.1β-A7.4β: the paper's claims for symgen's same-symbol variant, on every seed run."""

        def em(method: str, scenario: str, prefix: str = "eval/") -> list[float]:
            return _em(by_seed, method, scenario, prefix)

        if "standard+β" not in by_seed:
            return []
        claims = []
        s_seen, s_unseen = em("standard+β", "all_seen"), em("standard+β", "all_unseen")
        claims.append(
            _judged(
                "A7.1β",
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
                "A7.2β",
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
                "A7.3β",
                "; ".join(parts)
                + f"; forgetting as trained: all_unseen {_fmt(as_trained)} (per seed; needs >= "
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
                    "A7.4β",
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
