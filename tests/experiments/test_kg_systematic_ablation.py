"""The kg-systematic ablation: R = 2 with a two-layer block changes one thing of the quick R = 2 run,
lists the R = 2 and R = 4 runs exactly as kg-systematic trains them, and tables all three."""

from pathlib import Path

from conftest import write_kg_systematic_run

from symgen.config import resolve
from symgen.experiments.kg_systematic.experiment import KGSystematicExperiment
from symgen.experiments.kg_systematic_ablation.experiment import (
    PAPER_PHI_RUN,
    TWO_LAYER_RUN,
    KGSystematicAblationExperiment,
)
from symgen.experiments.registry import select


def test_the_two_layer_run_changes_only_the_block_of_r2_and_shares_the_claim_runs():
    for suite in ("smoke", "quick"):
        claims = {r.name: r for r in KGSystematicExperiment().runs(suite)}
        ablation = {r.name: r for r in KGSystematicAblationExperiment().runs(suite)}
        assert set(ablation) == {PAPER_PHI_RUN, TWO_LAYER_RUN, "kg-sys-looped-r2", "kg-sys-looped"}
        for name in (TWO_LAYER_RUN, "kg-sys-looped-r2", "kg-sys-looped"):  # trained once in one output
            assert ablation[name] == claims[name], (suite, name)
        two = resolve(ablation[TWO_LAYER_RUN].recipe, ablation[TWO_LAYER_RUN].overrides)
        r2 = resolve(claims["kg-sys-looped-r2"].recipe, claims["kg-sys-looped-r2"].overrides)
        r4 = resolve(claims["kg-sys-looped"].recipe, claims["kg-sys-looped"].overrides)
        assert (two.model.n_layers, two.model.n_loops) == (2, 2) and r2.model.n_layers == 1
        assert two.model.n_layers * two.model.n_loops == r4.model.n_layers * r4.model.n_loops
        assert two.train.steps == r4.train.steps  # R = 4's budget: R = 4 composes within it
        assert two.task == r2.task and two.train.lr == r2.train.lr
        phi = resolve(ablation[PAPER_PHI_RUN].recipe, ablation[PAPER_PHI_RUN].overrides)
        assert phi.task.phi < r4.task.phi and phi.model == r4.model and phi.train == r4.train
    assert resolve(ablation[PAPER_PHI_RUN].recipe, ablation[PAPER_PHI_RUN].overrides).task.phi == 7.2
    assert KGSystematicAblationExperiment().runs("paper") == []
    assert KGSystematicAblationExperiment.statements == ()  # it judges no claim
    assert [e.name for e in select("quick", "kg-systematic-ablation")] == ["kg-systematic-ablation"]


def test_the_table_gives_each_run_its_layer_passes_and_ood_step(tmp_path: Path):
    runs = {
        TWO_LAYER_RUN: write_kg_systematic_run(tmp_path / "two", 2, [0.0, 0.2, 0.6, 0.7], blocks=2),
        "kg-sys-looped-r2": write_kg_systematic_run(tmp_path / "r2", 2, [0.0, 0.1, 0.1, 0.1]),
        "kg-sys-looped": write_kg_systematic_run(tmp_path / "r4", 4, [0.0, 0.6, 0.7, 0.8]),
        "kg-sys-deep": write_kg_systematic_run(tmp_path / "deep", 1, [0.0] * 4, blocks=4),  # not tabled
    }
    (tmp_path / "figures").mkdir()
    section = KGSystematicAblationExperiment().analyze("quick", runs, tmp_path / "figures")
    assert section.claims == [] and len(section.figures) == 1 and section.figures[0].exists()
    table = section.tables[0]
    rows = {row[0]: dict(zip(table.headers, row, strict=True)) for row in table.rows}
    assert list(rows) == [TWO_LAYER_RUN, "kg-sys-looped-r2", "kg-sys-looped"]
    passes = {n: r["layer passes per step"] for n, r in rows.items()}
    assert passes == {TWO_LAYER_RUN: 4, "kg-sys-looped-r2": 2, "kg-sys-looped": 4}
    ood_from = {n: r["OOD ≥ 0.5 from step"] for n, r in rows.items()}
    assert ood_from == {TWO_LAYER_RUN: "750", "kg-sys-looped-r2": "—", "kg-sys-looped": "500"}
    assert rows["kg-sys-looped"]["ID phase"] == "250"  # the phases B5.2 reads, for the phi row
    assert rows[TWO_LAYER_RUN]["OOD"] == round((0.2 + 0.6 + 0.7) / 3, 4)
