import json
from pathlib import Path

import yaml

from symgen.config import resolve
from symgen.experiments.registry import experiments, select
from symgen.experiments.types import SUITES
from symgen.experiments.unseen.claims import STATEMENTS
from symgen.experiments.unseen.experiment import UnseenSymbolsExperiment, method_runs
from symgen.experiments.unseen_mid.experiment import (
    RULE_CHOICE,
    UnseenMidExperiment,
    plateau_exit,
    width_points,
    width_table,
)

SCENARIOS = ("all_seen", "query_unseen", "all_unseen")
GOOD = {"all_seen": 0.95, "query_unseen": 0.9, "all_unseen": 0.9}
BAD = {"all_seen": 0.95, "query_unseen": 0.05, "all_unseen": 0.0}
LEFT, STUCK = (0.2, 0.3, 0.9), (0.06, 0.07, 0.07)  # rule choice at steps 1000, 2000, 3000


def fake_run(path: Path, scores: dict[str, float], cos: float, width: int, rule: tuple[float, ...]) -> None:
    """A finished run as the unseen analysis reads it: summary, metrics (rule choice at steps 1000,
    2000, ...) and the config's width."""
    path.mkdir(parents=True)
    final = {f"eval/{s}/{m}": scores[s] for s in SCENARIOS for m in ("exact_match", "answer_accuracy")}
    final |= {"collapse/unseen_out_mean_cos": cos, "collapse/unseen_self_nn": 1 - cos, RULE_CHOICE: rule[-1]}
    if "forget" in path.name:
        final |= {f"redrawn/{s}/exact_match": GOOD[s] for s in SCENARIOS}
    records = [final | {"step": 1000 * (i + 1), RULE_CHOICE: r} for i, r in enumerate(rule)]
    summary = {"final": final, "steps": records[-1]["step"], "train_seconds": 1.0, "parameters": width * 100}
    (path / "summary.json").write_text(json.dumps(summary))
    (path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    config = {"model": {"d_model": width}, "task": {"n_seen": 200}}
    (path / "config.yaml").write_text(yaml.safe_dump(config))


SCORES = {  # the paper's effects, by run name without `unseen-`
    "standard": (BAD, 0.97),
    "copy": ({**BAD, "query_unseen": 0.3}, 0.99),
    "copy-frozen": (GOOD, 0.01),
    "copy-forget": (GOOD, 0.02),
    "forget-temporary": ({**BAD, "all_unseen": 0.1}, 0.95),
    "copy-forget-temporary": (GOOD, 0.6),
    "standard-same-symbol": (BAD, 0.97),
    "standard-no-decay-same-symbol": (BAD, 0.5),
    "copy-frozen-same-symbol": (GOOD, 0.01),
    "copy-forget-same-symbol": (GOOD, 0.02),
    "forget-temporary-same-symbol": ({**BAD, "all_unseen": 0.1}, 0.95),
    "copy-forget-temporary-same-symbol": (GOOD, 0.6),
    "copy-same-symbol": ({**BAD, "query_unseen": 0.6}, 0.99),
}


def mid_runs(tmp_path: Path, wide_left: bool = False, **changes: dict[str, float]) -> dict[str, Path]:
    """Every mid run, faked: the method runs at d = 128 show the paper's effects; copy + frozen
    (without the term) stays on the plateau at every width unless `wide_left` (d = 256 leaves it)."""
    dirs = {r.name: tmp_path / r.name for r in UnseenMidExperiment().runs("mid")}
    for name, path in dirs.items():
        if name.startswith("unseen-"):
            method = name.removeprefix("unseen-")
            scores, cos = SCORES[method]
            rule = STUCK if method == "copy-frozen" else LEFT
            fake_run(path, {**scores, **changes.get(method, {})}, cos, 128, rule)
        else:
            width = int(name.split("-")[1])
            left = "same-symbol" in name or name == "width-64-standard" or (wide_left and width == 256)
            fake_run(path, GOOD if left else BAD, 0.01, width, LEFT if left else STUCK)
    return dirs


def test_the_mid_suite_holds_only_the_experiments_that_list_it():
    assert "mid" in SUITES and SUITES.index("quick") < SUITES.index("mid") < SUITES.index("paper")
    assert [e.name for e in select("mid", None)] == ["unseen-mid"]
    for exp in experiments():
        assert ("mid" in exp.suites) == (exp.name == "unseen-mid")
    smoke, quick, paper = ([e.name for e in select(s, None)] for s in ("smoke", "quick", "paper"))
    assert "unseen-mid" in smoke and "unseen-mid" not in quick + paper
    # the quick-only experiments stay quick-only, every other one keeps smoke, quick and paper
    assert {"unseen-ablation", "implicit-horn-ablation"} <= set(quick) - set(paper)
    assert {"reverse", "unseen", "theory", "kg-systematic", "implicit-horn"} <= set(smoke) & set(quick) & set(
        paper
    )


def test_mid_runs_are_the_unseen_runs_at_d128_and_the_width_runs_copy_their_reference():
    mid = {r.name: r for r in UnseenMidExperiment().runs("mid")}
    quick = {r.name: r for r in UnseenSymbolsExperiment().runs("quick")}
    methods = [n for n in mid if n.startswith("unseen-")]
    assert len(methods) == 13 and all("model.d_model=128" in mid[n].overrides for n in methods)
    for name in methods:  # the quick run's recipe and overrides, at d = 128
        if name in quick:
            assert mid[name].recipe == quick[name].recipe
            assert [o for o in mid[name].overrides if o != "model.d_model=128"] == quick[name].overrides
    assert "train.forget_last=true" in mid["unseen-copy-forget-same-symbol"].overrides
    for method in ("standard", "copy-frozen", "copy-frozen-same-symbol"):  # the quick runs' exact config
        width = mid[f"width-64-{method}"]
        assert (width.recipe, width.overrides) == (
            quick[f"unseen-{method}"].recipe,
            quick[f"unseen-{method}"].overrides,
        )
    assert mid["width-256-copy-frozen"].overrides == ["model.d_model=256", "model.n_heads=8"]
    longer = mid["width-128-copy-frozen"]  # the claims' d = 128 copy + frozen, for 12 000 steps
    assert resolve("horn-standard").train.steps < 12000  # longer than the budget every arm shares
    assert (longer.recipe, longer.overrides) == (
        mid["unseen-copy-frozen"].recipe,
        [*mid["unseen-copy-frozen"].overrides, "train.steps=12000"],
    )
    assert set(method_runs({n: Path(n) for n in mid})) == {
        n.removeprefix("unseen-").replace("-same-symbol", "+β").replace("-", "_") for n in methods
    }
    # a smoke run named by both experiments is trained once: the two must agree on it
    unseen_smoke = {r.name: r for r in UnseenSymbolsExperiment().runs("smoke")}
    for run in UnseenMidExperiment().runs("smoke"):
        if run.name in unseen_smoke:
            assert (run.recipe, run.overrides) == (
                unseen_smoke[run.name].recipe,
                unseen_smoke[run.name].overrides,
            )


def test_mid_claims_are_their_own_rows_judged_by_the_unseen_judges(tmp_path: Path):
    exp = UnseenMidExperiment()
    section = exp.analyze("mid", mid_runs(tmp_path / "a"), tmp_path / "fig")
    verdicts = {c.id: c.verdict for c in section.claims}
    assert list(verdicts) == [f"{s.id} (mid)" for s in STATEMENTS]
    reproduced = ("A7.1", "A7.2", "A7.3", "A7.4", "A7.1β", "A7.2β", "A7.3β", "A7.4β")
    # A7.5's no-decay part reads the rows' spread from final weights, which these made-up runs lack
    assert verdicts == {f"{c} (mid)": "reproduced" for c in reproduced} | {"A7.5 (mid)": "partly reproduced"}
    a75 = next(c for c in section.claims if c.id == "A7.5 (mid)")
    assert a75.parts[2].outcome == "not judged" and "no final weights" in a75.parts[2].measured
    assert all(f.exists() and f.parent == tmp_path / "fig" / "unseen-mid" for f in section.figures)
    # the numbers decide: copy + frozen that does not solve all_unseen fails its part of A7.3 (mid)
    section = exp.analyze(
        "mid", mid_runs(tmp_path / "b", **{"copy-frozen": {"all_unseen": 0.5}}), tmp_path / "f"
    )
    a73 = next(c for c in section.claims if c.id == "A7.3 (mid)")
    assert [p.outcome for p in a73.parts] == ["fail", "pass"] and a73.verdict == "not reproduced"


def test_plateau_exit_is_the_first_evaluation_above_one_half():
    records = [{"step": s, RULE_CHOICE: r} for s, r in ((1000, 0.1), (2000, 0.5), (3000, 0.62), (4000, 0.9))]
    assert plateau_exit(records) == 3000  # 0.5 itself has not left it
    assert plateau_exit([{"step": 500, "train/loss": 1.0}, *records[:2]]) is None


def test_width_table_and_answer_come_from_the_metrics(tmp_path: Path):
    dirs = mid_runs(tmp_path / "a")
    points = width_points(dirs)
    table = width_table(points).rows
    rows = {(r[0], r[1]): r for r in table}
    assert set(rows) == {
        ("standard", 64),
        ("standard", 128),
        ("copy + frozen", 64),
        ("copy + frozen", 128),
        ("copy + frozen", 256),
        ("copy + frozen + same-symbol", 64),
        ("copy + frozen + same-symbol", 128),
    }
    assert rows[("copy + frozen", 256)][5] == "never" and rows[("copy + frozen + same-symbol", 64)][5] == 3000
    # two copy + frozen runs at d = 128: the claims' run (5000 steps) and the longer width run
    at_128 = [r[3] for r in table if (r[0], r[1]) == ("copy + frozen", 128)]
    assert at_128 == ["unseen-copy-frozen", "width-128-copy-frozen"] and rows[("standard", 64)][2] == 6400
    section = UnseenMidExperiment().analyze("mid", dirs, tmp_path / "fig")
    answer = section.paragraphs[1]
    assert "does not leave the rule-choice plateau at any width measured (d = 64, 128, 256)" in answer
    assert section.tables[-1].rows == width_table(points).rows
    assert any(f.name == "unseen_mid_plateau_width.png" for f in section.figures)
    # the same question, where the widest copy + frozen run leaves the plateau at step 3000
    section = UnseenMidExperiment().analyze("mid", mid_runs(tmp_path / "b", wide_left=True), tmp_path / "f")
    answer = section.paragraphs[1]
    assert "copy + frozen model, without the same-symbol term, leaves the rule-choice plateau" in answer
    assert "at d = 256 within 3000 steps of the runs measured (d = 64, 128, 256)" in answer
