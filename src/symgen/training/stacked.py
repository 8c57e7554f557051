"""Several seeds of one recipe trained as one stacked model.

Each seed is an ordinary `Trainer` — its own task and data stream, hooks (interventions,
curriculum), AdamW, learning rate, gradient clipping, log, checkpoints and run directory — whose
model's parameters are views of one seed of a stacked model (`symgen.models.stacking`). A step draws
every seed's batch, runs one forward and backward pass of the stacked model over all of them (the
loss is each seed's own mean, summed, so each seed's gradient is exactly its own), hands each seed
its slice of the gradients and lets it finish the step as a single run would. Seeds that drew
different iteration counts share the pass through per-row iteration counts.

A seed whose run ends early (a stalled curriculum, its compute budget) stays in the stacked pass
without being updated, so the others go on unchanged.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from symgen.config import ExperimentConfig
from symgen.errors import UserError, writable_dir
from symgen.models.stacking import share_seed, stack
from symgen.tasks.base import IGNORE, Batch
from symgen.training import checkpoint as ckpt
from symgen.training.build import announce, prepare_trainer, resume_note, was_started
from symgen.training.distributed import Dist, resolve_device
from symgen.training.match_loss import attention_for_term, match_weight_at, matching_term
from symgen.training.run_dir import (
    check_resumable,
    extension,
    finish_run,
    is_finished,
    read_summary,
    reopen,
    seed_dir,
    seed_listing,
)
from symgen.training.trainer import Trainer, progress_bar


def pad_to(batch: Batch, width: int, pad_id: int) -> Batch:
    """Right-pad a batch to `width` columns (no loss there; causal attention never sees them)."""
    extra = width - batch.inputs.shape[1]
    if extra == 0:
        return batch
    inputs = F.pad(batch.inputs, (0, extra), value=pad_id)
    return Batch(inputs, F.pad(batch.targets, (0, extra), value=IGNORE))


class StackedTrainer:
    def __init__(self, lanes: list[Trainer], progress: bool = True) -> None:
        if any(lane.dist.active for lane in lanes):
            raise UserError("stacked seeds (--seeds) train in one process, not under torchrun")
        self.lanes, self.progress = lanes, progress
        self.model = stack([lane.model for lane in lanes])
        for index, lane in enumerate(lanes):
            share_seed(lane.model, self.model, index)
        self.pad_id = lanes[0].task.pad_id if lanes[0].task.pad_id is not None else 0

    def train_step(self) -> None:
        lanes = self.lanes
        drawn = [lane.next_batch(lane.step) for lane in lanes]
        width = max(batch.inputs.shape[1] for batch, _ in drawn)
        batches = [pad_to(batch, width, self.pad_id) for batch, _ in drawn]
        inputs = torch.cat([b.inputs for b in batches])
        targets_full = torch.cat([b.targets for b in batches])
        rows = batches[0].inputs.shape[0]
        loops = [lane.n_loops for lane in lanes]  # one per seed: seeds may draw different R
        scored = targets_full != IGNORE
        match_weight = match_weight_at(lanes[0].cfg.train, lanes[0].step)  # the seeds step together
        with lanes[0].autocast(), attention_for_term(self.model, match_weight) as recorded:
            logits = self.model(inputs, n_loops=loops, select=scored).logits
        targets = targets_full[scored]
        token_loss = F.cross_entropy(
            logits.float(), targets, label_smoothing=lanes[0].cfg.train.label_smoothing, reduction="none"
        )
        seed_of_token = scored.nonzero()[:, 0] // rows
        loss_sums = torch.zeros(len(lanes), device=inputs.device).index_add_(0, seed_of_token, token_loss)
        n_scored = torch.tensor([n for _, n in drawn], device=inputs.device, dtype=loss_sums.dtype)
        objective = (loss_sums / n_scored).sum()
        if match_weight:  # each seed's own term, summed: each seed's gradient stays its own
            blocks = lanes[0].cfg.train.match_loss_blocks
            for index, lane in enumerate(lanes):
                own = slice(index * rows, (index + 1) * rows)
                match = matching_term(recorded, blocks, inputs, lane.symbols, own)
                objective = objective + match_weight * lane.note_match(match)
        objective.backward()

        counts = scored.view(len(lanes), -1).sum(1).tolist()
        logits_by_seed, targets_by_seed = logits.split(counts), targets.split(counts)
        for index, lane in enumerate(lanes):
            if not lane.running:
                continue
            for name, p in lane.model.named_parameters():
                p.grad = self.model.get_parameter(name).grad[index]
            lane.apply_update(lane.step)
            own = slice(index * rows, (index + 1) * rows)
            lane.record(loss_sums[index].detach(), logits_by_seed[index], targets_by_seed[index], scored[own])
        self.model.zero_grad(set_to_none=True)

    def fit(self) -> None:
        for lane in self.lanes:
            lane.start()
        self.model.train()
        first = min(lane.step for lane in self.lanes)
        # closed on Ctrl-C too, so that no bar is drawn after the message that ends the command
        with progress_bar(self.lanes[0].cfg.train.steps, first, self.progress) as bar:
            while any(lane.running for lane in self.lanes):
                start = time.perf_counter()
                self.train_step()
                seconds = time.perf_counter() - start
                logged = [lane.end_step(seconds) for lane in self.lanes if lane.running]
                if any(logged):
                    running = [lane for lane in self.lanes if lane.running]
                    shown = running[0].bar_postfix if running else {}
                    bar.set_postfix(seeds=len(running), **shown, refresh=False)
                bar.update(1)


def train_seeds(
    cfg: ExperimentConfig,
    seeds: list[int],
    out: Path,
    resume: bool = False,
    progress: bool = True,
    say_fresh: bool = False,
) -> list[dict[str, Any]]:
    """Train `seeds` of one config as one stacked model (`symgen.training.stacked`): one ordinary
    run directory per seed, OUT/seed-N, loadable and resumable like any run. OUT/seeds.json keeps
    the seed list, and a stacked run resumes only with the same list. `resume` and `say_fresh` say
    what they do as in `train_run`."""
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise UserError("--seeds trains every seed in one process; run it without torchrun")
    out = Path(out)
    existed = out.exists()
    listing = seed_listing(out)
    stored = json.loads(listing.read_text())["seeds"] if listing.exists() else seeds
    if stored != seeds:
        shown = ",".join(map(str, stored))
        raise UserError(f"{out} holds a stacked run of seeds {shown}; resume it with --seeds {shown}")
    configs = {seed: copy.deepcopy(dataclasses.replace(cfg, seed=seed)) for seed in seeds}
    for seed in seeds:
        run_dir = seed_dir(out, seed)
        if resume and is_finished(run_dir) and extension(configs[seed], run_dir):
            print(reopen(configs[seed], run_dir), file=sys.stderr)
        check_resumable(configs[seed], run_dir)
    device = resolve_device(cfg.device)
    if cfg.train.threads > 0:
        torch.set_num_threads(cfg.train.threads)
    writable_dir(out)
    ckpt.atomic_write_json(listing, {"seeds": seeds})
    todo = [seed for seed in seeds if not is_finished(seed_dir(out, seed))]
    told = [seed for seed in todo if resume and (say_fresh or was_started(seed_dir(out, seed)))]
    notes = [resume_note(seed_dir(out, seed), configs[seed], existed) for seed in told]
    if notes and len(todo) == len(seeds) and not any(was_started(seed_dir(out, s)) for s in seeds):
        notes = [resume_note(out, cfg, existed)]  # one line for a stacked run that never started
    single = Dist()
    lanes = [
        prepare_trainer(configs[seed], seed_dir(out, seed), device, single, resume, progress=False)
        for seed in todo
    ]
    for note in notes:  # said once every checkpoint they name has loaded
        print(note, file=sys.stderr)
    summaries = {s: read_summary(seed_dir(out, s)) | {"skipped": True} for s in seeds if s not in todo}
    if lanes:
        announce(cfg, device, f" (seeds {','.join(map(str, todo))}, stacked)")
        started = time.time()
        StackedTrainer(lanes, progress).fit()
        for seed, lane in zip(todo, lanes, strict=True):
            summaries[seed] = finish_run(lane, started, {"stacked_seeds": len(lanes)})
    return [summaries[seed] for seed in seeds]
