"""Training speed on the machine that ran the suite: `symgen bench` at the recipes' sizes, measured
once per output directory (OUT/bench.json; delete it to measure again) and shown as a table."""

from __future__ import annotations

import json
from pathlib import Path

from symgen.experiments.speed.bench import benchmark
from symgen.experiments.types import Experiment, Section, Table

# a short measurement: the suite's report should not wait long for it
SETTINGS = {
    "smoke": {"sizes": ["kg-quick"], "rounds": 1, "steps": 1, "stack": [1, 2]},
    "quick": {"sizes": ["horn-quick", "kg-quick", "d256"], "rounds": 3, "steps": 3, "stack": [1, 4, 16]},
    "paper": {"sizes": ["horn-quick", "kg-quick", "d256"], "rounds": 5, "steps": 4, "stack": [1, 4, 16]},
}


class SpeedExperiment(Experiment):
    name = "speed"
    report_unasked = False  # it measures for minutes: only when the suite runs it
    title = "Training speed: symgen against looped GPT2Blocks and plain PyTorch, and stacked seeds"

    def analyze(self, suite: str, run_dirs: dict[str, Path], figure_dir: Path) -> Section:
        path = figure_dir.parent / "bench.json"
        if path.exists():
            result = json.loads(path.read_text())
        else:
            result = benchmark(**SETTINGS[suite])
            path.write_text(json.dumps(result, indent=1) + "\n")
        return Section(self.title, [self.text(result)], tables=self.tables(result))

    @staticmethod
    def text(result: dict) -> str:
        return (
            f"Training steps per second on this machine ({result['device']}, {result['threads']} thread), "
            f"{result['rounds']} interleaved rounds of {result['steps_per_round']} steps per side on the "
            "same pre-drawn batches of each recipe's task; median with min–max. gpt2-loop: Hugging Face "
            "GPT2Blocks looped R times with a tied head (the paper-B authors' style); plain: "
            "torch.nn.TransformerEncoderLayer looped the same way. Stacked: S seeds as one model "
            "(`symgen train --seeds`), per-seed throughput against one ordinary step. Raw: bench.json."
        )

    @staticmethod
    def tables(result: dict) -> list[Table]:
        rows, stacked = [], []
        for name, size in result["sizes"].items():
            rates = size["steps_per_s"]
            shape = f"d {size['d_model']}, {size['layers']} blocks × R {size['loops']}, batch {size['batch']}"
            cells = [name, shape, size["parameters"]]
            for side in ("symgen", "gpt2-loop", "plain"):
                r = rates.get(side)
                cells.append(f"{r['median']:.1f} ({r['min']:.1f}–{r['max']:.1f})" if r else "—")
            cells += [size.get("symgen_vs_gpt2-loop", "—"), size.get("symgen_vs_plain", "—")]
            rows.append(cells)
            for seeds, entry in size.get("stacked", {}).items():
                stacked.append(
                    [
                        name,
                        seeds,
                        entry["steps_per_s"],
                        entry["per_seed_steps_per_s"],
                        entry["per_seed_speedup"],
                    ]
                )
        tables = [
            Table(
                [
                    "size",
                    "shape",
                    "parameters",
                    "symgen",
                    "gpt2-loop",
                    "plain",
                    "symgen ÷ gpt2-loop",
                    "symgen ÷ plain",
                ],
                rows,
                "Training steps per second, median (min–max).",
            )
        ]
        if stacked:
            tables.append(
                Table(
                    ["size", "seeds stacked", "steps/s", "per-seed steps/s", "per-seed speed-up"],
                    stacked,
                    "Stacked seeds: one step trains every seed; speed-up against one ordinary step.",
                )
            )
        return tables
