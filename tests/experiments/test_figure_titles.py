"""A figure of the suite's analysis names its experiment and the seed it shows in its title."""

from pathlib import Path

import pytest

from symgen.analysis.plots import line_figure, plt
from symgen.experiments.suite import analyze_experiment, seed_label
from symgen.experiments.types import Experiment, RunSpec, Section


class Drawing(Experiment):
    name, title = "drawing", "An analysis that draws one figure"

    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        figure = line_figure(figure_dir / "f.png", {"a": ([0, 1], [0.1, 0.2])}, "step", "acc", "learning")
        return Section(self.title, figures=[figure])


@pytest.fixture
def titles(monkeypatch) -> list[str]:
    """The title of every figure `save` closes."""
    seen: list[str] = []
    close = plt.close

    def keep(fig):
        seen.append(fig.axes[0].get_title())
        close(fig)

    monkeypatch.setattr(plt, "close", keep)
    return seen


def test_each_seeds_figure_is_titled_with_the_experiment_and_its_seed(tmp_path: Path, titles):
    runs = [RunSpec("r", "reverse", seeds=(3, 5), suite_seeds=True)]
    analyze_experiment(Drawing(), "smoke", runs, tmp_path)
    assert titles == ["learning (drawing, seed 3)", "learning (drawing, seed 5)"]


def test_without_suite_seeds_the_seed_is_the_one_the_runs_record(tmp_path: Path):
    for name, seed in (("a", 0), ("b", 0), ("c", 2)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.yaml").write_text(f"name: x\nseed: {seed}\n")
    assert seed_label(None, {"a": tmp_path / "a", "b": tmp_path / "b"}) == "seed 0"
    assert seed_label(None, {"a": tmp_path / "a", "c": tmp_path / "c"}) == "seeds 0, 2"
    assert seed_label(None, {"gone": tmp_path / "gone"}) == ""
    assert seed_label(4, {}) == "seed 4"
