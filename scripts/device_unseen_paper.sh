#!/usr/bin/env bash
# Paper A's unseen-symbols experiment at the papers' sizes on one GPU, cut to fit a time limit.
#
# It trains the paper suite's paper-architecture rows (standard, copy, copy + frozen, copy +
# forgetting; 60-75M parameters, batch 256, the paper-size Horn problems). Their 30 000 steps do not
# fit a short GPU loan, so the script first times a warm-up run of the slowest of them (copy +
# forgetting, which is evaluated twice: as trained and with re-drawn rows), then picks train.steps so
# that the four runs, their evaluations and the report fit the limit, and runs
#
#   symgen reproduce --suite paper --only unseen --runs RUNS --set train.steps=N --set ... --out OUT
#
# The warm-up's steps/s, the plan and every run's steps/s are printed and written to OUT/plan.json;
# the report and claims are OUT/report.html and OUT/claims.json. Every --set is recorded in both.
# Settings that hold for one recipe only (train.forget_every: the resets every 1000 steps) cannot be
# given to every run and stay the paper's, so a short run sees few resets.
#
# usage: scripts/device_unseen_paper.sh [OUT] [LIMIT_MINUTES]     (defaults: unseen-paper, 12)
# env:   PYTHON=...  an interpreter with torch (default python3); the package is read from src/
#        N_SEEDS=N   seeds 0..N-1 per run, stacked in one model (default 1: the paper suite's 3 cost 3x a step)
#        SHRINK=1    a tiny model and task on the CPU, to test the script itself
#        FIXED_STEPS=N  train N steps per run, not the planned number (the warm-up still runs, and
#                    plan.json keeps planned_steps): a rerun of a known plan, or a test of the script
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-unseen-paper}"
LIMIT_MIN="${2:-12}"
PYTHON="${PYTHON:-python3}"
if [[ -n "${SEEDS:-}" ]]; then
  echo "SEEDS=N is N_SEEDS=N now (seeds 0..N-1; symgen's --seeds names seeds, not a count)" >&2
  exit 2
fi
N_SEEDS="${N_SEEDS:-1}"
export PYTHONPATH="$ROOT/src${PYTHONPATH:+:$PYTHONPATH}"
STARTED="$("$PYTHON" -c 'import time; print(time.time())')"

RUNS="unseen-standard,unseen-copy,unseen-copy-frozen,unseen-copy-forget"
SLOWEST="unseen-copy-forget"
EVALS=8           # evaluations per run (the curves), the last one full
RESERVE_S=45      # the analysis and the report, after training
SHRUNK=()
if [[ "${SHRINK:-0}" == 1 ]]; then
  SHRUNK=(model.d_model=32 model.n_heads=2 model.n_layers=4 train.batch_size=8
          task.n_test=4 task.eval_batch_size=4 task.max_new_tokens=24)
  EVALS=2
  RESERVE_S=15
fi
SET_ARGS=()
for item in "${SHRUNK[@]}"; do SET_ARGS+=(--set "$item"); done

if [[ -e "$OUT/runs" ]]; then
  echo "$OUT holds runs already (trained under another plan): choose a new OUT" >&2
  exit 2
fi
mkdir -p "$OUT"

# 1. warm-up: the slowest run's recipe and overrides at 40 steps, evaluated (in full) once, at the end
line="$("$PYTHON" -m symgen reproduce --suite paper --only unseen --runs "$SLOWEST" "${SET_ARGS[@]}" --list \
        | awk -F'\t' -v run="  $SLOWEST" '$1 == run {print $2}')"
read -r -a recipe_and_overrides <<< "$line"
rm -rf "$OUT/warmup"
warm_start="$("$PYTHON" -c 'import time; print(time.time())')"
"$PYTHON" -m symgen train "${recipe_and_overrides[@]}" train.steps=40 train.eval_every=40 \
  train.warmup_steps=4 train.checkpoint_every=40 --out "$OUT/warmup" --no-progress > "$OUT/warmup.log" 2>&1 \
  || { tail -20 "$OUT/warmup.log" >&2; exit 1; }

# 2. the plan (scripts/device_plan.py): steps per run such that four runs, their evaluations and the
#    report fit the limit; it exits 1, saying so, when the limit leaves no time at this speed
plan="$("$PYTHON" "$ROOT/scripts/device_plan.py" "$OUT" "$LIMIT_MIN" "$STARTED" "$warm_start" "$RESERVE_S" \
        "$EVALS" "$N_SEEDS" "${FIXED_STEPS:-}")"
echo "plan: $plan"
read -r STEPS EVERY WARM <<< "$("$PYTHON" -c 'import json, sys; p = json.loads(sys.argv[1]); print(p["train_steps"], p["eval_every"], p["warmup_steps"])' "$plan")"

# 3. the four runs, cut to the plan, and the report
"$PYTHON" -m symgen reproduce --suite paper --only unseen --runs "$RUNS" "${SET_ARGS[@]}" \
  --set "train.steps=$STEPS" --set "train.eval_every=$EVERY" --set "train.warmup_steps=$WARM" \
  --set "train.checkpoint_every=$STEPS" --seeds "0-$((N_SEEDS - 1))" --out "$OUT" --no-progress

"$PYTHON" - "$OUT" "$RUNS" "$STARTED" <<'EOF'
import json, sys, time
from pathlib import Path

out, runs, started = Path(sys.argv[1]), sys.argv[2].split(","), float(sys.argv[3])
plan = json.loads((out / "plan.json").read_text())
print(f"warm-up: {plan['warmup_steps_per_second']} steps/s")
plan["runs"] = {}
for run in runs:  # one summary per run, or per seed when seeds are stacked (the same speed)
    s = json.loads(sorted((out / "runs" / run).glob("**/summary.json"))[0].read_text())
    print(f"{run}: {s['steps']} steps, {s['steps_per_second']} steps/s (evaluations included), "
          f"{s['parameters']} parameters")
    plan["runs"][run] = s["steps_per_second"]
plan["wall_seconds"] = round(time.time() - started, 1)
(out / "plan.json").write_text(json.dumps(plan, indent=1) + "\n")
print(f"done in {plan['wall_seconds']} s of a {plan['limit_minutes']}-minute limit: {out}/report.html")
EOF
