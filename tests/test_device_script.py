"""scripts/device_unseen_paper.sh, shrunk to a tiny model on the CPU: it times a warm-up, plans the
four paper-architecture runs to fit its limit, and writes the report and claims."""

import json
import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "device_unseen_paper.sh"
LIMIT_S = 60  # the one-minute limit the shrunk run is given


def test_the_shrunk_device_run_fits_its_limit_and_writes_the_report(tmp_path: Path):
    out = tmp_path / "paper"
    env = os.environ | {"SHRINK": "1", "PYTHON": sys.executable, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        ["bash", str(SCRIPT), str(out), str(LIMIT_S / 60)],
        capture_output=True,
        text=True,
        timeout=LIMIT_S + 30,  # a script that overruns its limit fails below, with its output
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    plan = json.loads((out / "plan.json").read_text())
    assert plan["wall_seconds"] <= LIMIT_S and plan["warmup_steps_per_second"] > 0
    assert "steps/s" in result.stdout and set(plan["runs"]) == {
        "unseen-standard",
        "unseen-copy",
        "unseen-copy-frozen",
        "unseen-copy-forget",
    }
    header = json.loads((out / "claims.json").read_text())
    assert header["suite"] == "paper" and f"train.steps={plan['train_steps']}" in header["set"]
    assert "model.d_model=32" in header["set"] and header["runs"] == list(plan["runs"])
    config = (out / "runs" / "unseen-copy-forget" / "config.yaml").read_text()
    assert f"steps: {plan['train_steps']}" in config and "d_model: 32" in config
    assert "changed by --set" in (out / "report.html").read_text()
