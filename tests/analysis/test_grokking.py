"""Phase detection on synthetic metrics and the grokking figure."""

from __future__ import annotations

from pathlib import Path

from symgen.analysis.grokking import first_sustained, grokking_figure, in_order, phase_times


def synthetic(n: int = 40) -> list[dict]:
    records = []
    for i in range(1, n + 1):
        step = 100 * i
        records.append({"step": step, "train/loss": 1.0})  # a log line without evaluation
        records.append(
            {
                "step": step,
                "eval/train/accuracy": min(1.0, step / 500),  # >= 0.9 from step 500 (0.9 at 450 → 500)
                "eval/id/accuracy": 0.95 if step >= 1200 else 0.3,
                "eval/ood/accuracy": 0.6 if step >= 3000 or step == 2000 else 0.05,  # a lone spike at 2000
                "elapsed_s": step / 10,
            }
        )
    return records


def test_phase_times_in_order_and_patience():
    records = synthetic()
    times = phase_times(records)
    assert times == {"train": 500, "id": 1200, "ood": 2000}
    assert phase_times(records, patience=2)["ood"] == 3000  # the lone spike is not a phase
    assert phase_times(records, x="elapsed_s", patience=2) == {"train": 50.0, "id": 120.0, "ood": 300.0}
    assert in_order(times)
    assert not in_order(times | {"id": 500})  # ties are not an order
    assert not in_order(times | {"ood": None})
    assert phase_times(records, thresholds={"ood": 0.7})["ood"] is None


def test_first_sustained():
    assert first_sustained([1, 2, 3, 4], [0.1, 0.9, 0.2, 0.95], 0.9) == 2
    assert first_sustained([1, 2, 3, 4], [0.1, 0.9, 0.2, 0.95], 0.9, patience=2) is None


def test_figure_is_written(tmp_path: Path):
    path = grokking_figure(tmp_path / "grok.png", synthetic())
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
