"""The implicit Horn task: answers only, balanced per depth, deeper tests, an honest evaluation."""

import json
from collections import Counter

import pytest
import torch

from symgen.config import resolve
from symgen.errors import UserError
from symgen.models.transformer import ModelConfig, Transformer
from symgen.tasks.base import IGNORE
from symgen.tasks.horn_audit import shortcut_audit
from symgen.tasks.horn_implicit import ImplicitHornTask, ImplicitHornTaskConfig, answer_positions, share
from symgen.tasks.registry import make_task
from symgen.training.build import build_model
from symgen.training.curriculum import curriculum_hooks
from symgen.training.run import train_run

SMALL = dict(
    min_rules=4, max_rules=6, min_facts=2, max_facts=3, max_body=2, max_depth=3, prompt_order="facts_first"
)


@pytest.fixture(scope="module")
def task() -> ImplicitHornTask:
    return ImplicitHornTask(ImplicitHornTaskConfig(**SMALL, n_test=120), seed=0)


def entailed_by_brute_force(record: dict) -> bool:
    """Facts closed under the rules by naive repetition: written here, independent of the generator."""
    known = set(record["facts"])
    while True:
        new = {r["head"] for r in record["rules"] if set(r["body"]) <= known} - known
        if not new:
            return record["query"] in known
        known |= new


def test_labels_are_balanced_at_every_depth_and_tests_reach_twice_the_trained_depth(task):
    train = task.train_problems(0, 240)
    expected = {(d, lab): 40 for d in (1, 2, 3) for lab in (0, 1)}
    assert Counter((r["depth"], r["label"]) for r in train) == expected
    for records in task.test.values():
        counts = Counter((r["depth"], r["label"]) for r in records)
        assert counts == {(d, lab): 10 for d in range(1, 7) for lab in (0, 1)}


def test_test_problems_hold_training_rule_counts_and_two_more_per_level_beyond_it(task):
    """Depth-1 tests look like depth-1 training problems; only depths beyond training grow."""
    train = task.train_problems(0, 240)
    assert {len(r["rules"]) for r in train} <= set(range(4, 7))
    for records in task.test.values():
        for r in records:
            extra = 2 * max(0, r["depth"] - 3)
            assert 4 + extra <= len(r["rules"]) <= 6 + extra, (r["depth"], len(r["rules"]))
    shallow = [len(r["rules"]) for r in task.test["all_seen"] if r["depth"] <= 3]
    deep = [len(r["rules"]) for r in task.test["all_seen"] if r["depth"] == 6]
    assert max(shallow) <= 6 < min(deep)


def test_an_independent_checker_agrees_with_every_label(task):
    records = task.train_problems(3, 60) + [r for recs in task.test.values() for r in recs[:40]]
    assert all(entailed_by_brute_force(r) == r["label"] for r in records)


def test_surface_features_do_not_give_the_answer_away(task):
    assert shortcut_audit(task.train_problems(1, 600), task.test["all_seen"]) <= 0.6


def test_a_batch_scores_only_the_answer_at_the_last_prompt_token(task):
    records = task.train_problems(2, 6)
    batch = task.batch(records)
    for row, record in enumerate(records):
        scored = (batch.targets[row] != IGNORE).nonzero().flatten().tolist()
        length = len(task.prompt_tokens(record))
        assert scored == [length - 1]
        assert batch.targets[row, length - 1] == task.answer_ids[record["label"]]
        assert task.vocab[int(batch.inputs[row, length - 1])] == "<cot>"


def test_head_labels_say_whether_each_rule_head_is_entailed_and_the_answer_stays_last():
    cfg = ImplicitHornTaskConfig(**SMALL, n_test=12, head_labels=True)
    task = ImplicitHornTask(cfg, seed=1)
    records = task.train_problems(3, 8)
    batch = task.batch(records)
    for row, record in enumerate(records):
        tokens = task.prompt_tokens(record)
        scored = (batch.targets[row] != IGNORE).nonzero().flatten().tolist()
        assert scored[-1] == len(tokens) - 1 == answer_positions(batch.targets)[row]
        assert len(scored) == len(record["rules"]) + 1
        for j in scored[:-1]:
            assert tokens[j - 1] == "->"
            atom_entailed = entailed_by_brute_force({**record, "query": tokens[j]})
            assert batch.targets[row, j] == task.answer_ids[atom_entailed]


def test_with_the_query_last_its_own_token_is_labelled_too():
    cfg = ImplicitHornTaskConfig(**(SMALL | {"prompt_order": "query_last"}), n_test=12, head_labels=True)
    task = ImplicitHornTask(cfg, seed=1)
    records = task.train_problems(3, 8)
    batch = task.batch(records)
    for row, record in enumerate(records):
        length = len(task.prompt_tokens(record))
        scored = (batch.targets[row] != IGNORE).nonzero().flatten().tolist()
        assert scored[-2:] == [length - 2, length - 1] and len(scored) == len(record["rules"]) + 2
        assert batch.targets[row, length - 2] == batch.targets[row, length - 1]  # the query's own label
        assert answer_positions(batch.targets)[row] == length - 1


def test_evaluation_reads_every_depth_at_every_iteration_count_and_under_halting():
    cfg = ImplicitHornTaskConfig(**SMALL, n_test=12, eval_loops=[1, 3], halting=True)
    task = ImplicitHornTask(cfg, seed=1)
    model = Transformer(ModelConfig(vocab_size=task.vocab_size, max_seq_len=task.max_seq_len, d_model=32,
                                    n_heads=2, n_layers=1, n_loops=2, positions="rotary"))  # fmt: skip
    metrics = task.evaluate(model.eval(), torch.device("cpu"))
    for scenario in ("all_seen", "query_unseen", "all_unseen"):
        for d in range(1, 7):
            for key in (f"depth{d}/accuracy", f"depth{d}/accuracy@r1", f"depth{d}/accuracy@r3"):
                assert 0.0 <= metrics[f"{scenario}/{key}"] <= 1.0
            assert 1 <= metrics[f"{scenario}/depth{d}/halting/iterations"] <= 3
    # the plain key is the model's own R, the same number as reading it at r = 2 would give
    assert "all_seen/accuracy@r2" not in metrics and "all_seen/accuracy" in metrics


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"rule_labels": True}, "rule_labels"),
        ({"test_max_depth": 2}, "test_max_depth"),
        ({"eval_loops": [0, 2]}, "eval_loops"),
        ({"name": "horn"}, "horn-implicit"),
    ],
)
def test_bad_settings_are_refused(overrides, message):
    with pytest.raises(UserError, match=message):
        ImplicitHornTaskConfig(**SMALL | overrides).validate()


def test_the_depth_curriculum_starts_at_depth_one_and_adds_a_depth_when_one_passes():
    task = ImplicitHornTask(ImplicitHornTaskConfig(**SMALL, n_test=12, curriculum=True), seed=0)
    (curriculum,) = curriculum_hooks(task)
    assert {r["depth"] for r in task.train_problems(0, 40)} == {1}

    class FakeTrainer:
        optimizer = None

    curriculum.on_eval(FakeTrainer(), 100, {"eval/all_seen/depth1/accuracy": 0.7})
    assert task.train_hops == 1
    curriculum.on_eval(FakeTrainer(), 200, {"eval/all_seen/depth1/accuracy": 0.95})
    assert task.train_hops == 2 and curriculum.learnable_depth == 1
    assert {r["depth"] for r in task.train_problems(1, 40)} == {1, 2}
    assert max(r["depth"] for recs in task.test.values() for r in recs) == 6  # tests keep every depth


def test_deeper_test_problems_never_repeat_a_fixed_training_set():
    from symgen.tasks import horn_generator

    task = ImplicitHornTask(ImplicitHornTaskConfig(**SMALL, n_train=300, n_test=12), seed=2)
    train = {horn_generator.canonical_key(r) for r in task.train_records}
    assert len(train) == 300 and max(r["depth"] for r in task.test["all_seen"]) == 6
    assert not train & {horn_generator.canonical_key(r) for recs in task.test.values() for r in recs}


def test_accuracy_is_an_exact_fraction_so_36_of_40_passes_a_090_bar():
    assert share(torch.tensor([True] * 36 + [False] * 4)) >= 0.9


def test_a_bidirectional_reader_gets_the_padding_token_and_answers_alike_in_any_batch():
    cfg = resolve(
        "horn-implicit-vanilla",
        ["model.causal=false", "model.d_model=32", "task.n_seen=30", "task.n_unseen=20", "task.n_test=12"],
    )
    task = make_task(cfg.task, cfg.seed)
    model = build_model(cfg, task).eval()
    assert cfg.model.pad_id == task.pad_id
    records = task.test["all_seen"][:8]  # of several lengths: the batch pads all but the longest
    assert len({len(task.prompt_tokens(r)) for r in records}) > 1
    together = model(task.batch(records).inputs).logits
    at = answer_positions(task.batch(records).targets)
    for i, record in enumerate(records):
        alone = model(task.batch([record]).inputs).logits[0, at[i]]
        assert torch.allclose(alone, together[i, at[i]], atol=1e-5)


@pytest.mark.parametrize("stop", ["steps", "curriculum stalled"])
def test_light_evaluations_read_the_own_r_and_the_last_one_is_full(tmp_path, stop):
    overrides = ["model.d_model=16", "task.n_seen=30", "task.n_unseen=20", "task.n_test=12",
                 "task.eval_loops=[1,2]", "train.steps=12", "train.eval_every=4", "train.warmup_steps=2",
                 "train.light_evals=true", "train.threads=1", "task.curriculum_threshold=1.0",
                 f"task.curriculum_patience={2 if stop != 'steps' else 0}"]  # fmt: skip
    summary = train_run(resolve("horn-implicit-looped", overrides), tmp_path / "r", progress=False)
    assert summary["stopped_by"].startswith(stop)
    rows = [json.loads(line) for line in (tmp_path / "r" / "metrics.jsonl").read_text().splitlines()]
    evals = [r for r in rows if "eval/all_seen/depth1/accuracy" in r]
    assert [r["step"] for r in evals] == ([4, 8, 12] if stop == "steps" else [4, 8])
    for light in evals[:-1]:
        assert (
            "eval/all_seen/depth1/accuracy@r1" not in light and "eval/all_seen/halting/accuracy" not in light
        )
    last = evals[-1]
    assert "eval/all_seen/depth1/accuracy@r1" in last and "eval/all_seen/halting/accuracy" in last
    assert "eval/curriculum/stage" in last and summary["final"].keys() == last.keys() - {
        "step", "lr", "elapsed_s", "layer_passes"} - {k for k in last if k.startswith("train/")}  # fmt: skip


def test_validation_problems_match_the_test_set_in_shape_and_never_repeat_a_test_problem(task):
    """Fresh problems to choose r on: the test set's depths, labels and symbols, none of its problems."""
    from symgen.tasks import horn_generator

    key = horn_generator.canonical_key
    validation = task.validation_problems()
    assert validation.keys() == task.test.keys()
    for scenario, records in validation.items():
        shape = Counter((r["depth"], r["label"]) for r in records)
        assert shape == Counter((r["depth"], r["label"]) for r in task.test[scenario])
        assert not {key(r) for r in records} & {key(r) for recs in task.test.values() for r in recs}
        assert all(r["scenario"] == scenario and entailed_by_brute_force(r) == r["label"] for r in records)
    unseen = set(task.unseen_pool)
    assert all(set(r["facts"]) <= unseen for r in validation["all_unseen"])
    assert all(not set(r["facts"]) & unseen for r in validation["all_seen"])
    # the same problems at every call, and one scenario alone when asked
    assert task.validation_problems(("all_seen",)) == {"all_seen": validation["all_seen"]}
