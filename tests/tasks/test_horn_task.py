from types import SimpleNamespace

import pytest
import torch

from symgen.config import resolve
from symgen.errors import UserError
from symgen.tasks import horn, horn_generator, horn_task, horn_text
from symgen.tasks.base import IGNORE
from symgen.tasks.horn_task import HornTask, HornTaskConfig

SMALL = dict(
    n_seen=20,
    n_unseen=12,
    min_rules=2,
    max_rules=4,
    min_facts=2,
    max_facts=2,
    max_body=2,
    max_depth=2,
    n_test=8,
)


def make(**kw) -> HornTask:
    return HornTask(HornTaskConfig(**(SMALL | kw)), seed=3)


@pytest.mark.parametrize("n_train", [0, 40])
def test_unseen_symbols_never_occur_in_training_batches(n_train):
    task = make(n_train=n_train)
    unseen = set(task.unseen_ids())
    assert unseen and unseen.isdisjoint(task.seen_ids())
    for step in range(25):
        batch = task.train_batch(step, 16)
        ids = set(batch.inputs.flatten().tolist()) | set(batch.targets.flatten().tolist())
        assert not ids & unseen


def test_vocabulary_is_special_then_seen_then_unseen():
    task = make()
    n_special = len(horn.SPECIAL_TOKENS)
    assert task.vocab[:n_special] == horn.SPECIAL_TOKENS
    assert task.seen_ids() == list(range(n_special, n_special + 20))
    assert task.unseen_ids() == list(range(n_special + 20, n_special + 32))


@pytest.mark.parametrize(
    "order,labels",
    [("rules_first", False), ("facts_first", False), ("facts_first", True), ("query_last", False)],
)
def test_loss_mask_covers_exactly_the_target(order, labels):
    task = make(prompt_order=order, rule_labels=labels)
    records = task.train_problems(5, 12)
    batch = task.batch(records)
    for row, rec in enumerate(records):
        scored = batch.targets[row] != IGNORE
        target = [task.vocab[i] for i in batch.targets[row][scored].tolist()]
        assert target == horn_text.encode_target(rec, labels)
        # the scored positions are contiguous and start at the last prompt token (<cot>)
        first = int(scored.nonzero()[0])
        assert task.vocab[int(batch.inputs[row, first])] == horn.COT
        assert first == len(task.prompt_tokens(rec)) - 1
    assert batch.inputs.shape[1] <= task.max_seq_len


def test_facts_first_prompt_holds_the_same_tokens_with_facts_and_query_before_the_rules():
    task = make(prompt_order="facts_first")
    rec = task.test["all_seen"][0]
    tokens, reference = task.prompt_tokens(rec), horn_text.encode_prompt(rec)
    assert sorted(tokens) == sorted(reference + [horn.DOT])
    assert tokens[1] == horn.FACTS and tokens[-1] == horn.COT
    q = tokens.index(horn.QMARK)
    assert tokens[q + 1] == rec["query"] and tokens[2:q] == rec["facts"]
    assert len(tokens) <= task.cfg.max_prompt_tokens()


def test_query_last_prompt_holds_the_facts_then_the_rules_then_the_query():
    task = make(prompt_order="query_last")
    rec = task.test["all_seen"][0]
    tokens = task.prompt_tokens(rec)
    assert sorted(tokens) == sorted(horn_text.encode_prompt(rec) + [horn.DOT])
    dot = tokens.index(horn.DOT)
    assert tokens[1] == horn.FACTS and tokens[2:dot] == rec["facts"]
    assert tokens[-3:] == [horn.QMARK, rec["query"], horn.COT]
    rules = " ".join(tokens[dot + 1 : -3]).split(" . ")
    assert [r.removesuffix(" .") for r in rules] == [
        " ".join([*r["body"], horn.ARROW, r["head"]]) for r in rec["rules"]
    ]
    assert len(tokens) <= task.cfg.max_prompt_tokens()


def test_label_at_end_closes_every_rule_with_its_own_label_and_leaves_the_target_alone():
    plain = make(prompt_order="facts_first", rule_labels=True)
    task = make(prompt_order="facts_first", rule_labels=True, label_at_end=True)
    rec = task.test["all_seen"][0]
    tokens = task.prompt_tokens(rec)
    rules = " ".join(tokens[tokens.index(horn.QMARK) + 3 : -1]).split(" . ")
    assert len(rules) == len(rec["rules"])
    for i, rule in enumerate(rules):
        words = rule.removesuffix(" .").split()
        assert words[0] == words[-1] == horn.rule_label(i) and words[-2] == rec["rules"][i]["head"]
    assert [t for t in tokens if not horn.is_rule_label(t)] == [
        t for t in plain.prompt_tokens(rec) if not horn.is_rule_label(t)
    ]
    assert len(tokens) <= task.cfg.max_prompt_tokens()
    with pytest.raises(UserError, match="rule_labels"):
        HornTaskConfig(**(SMALL | dict(label_at_end=True))).validate()


def test_batches_are_a_pure_function_of_seed_and_step_and_avoid_test_problems():
    a, b = make(), make()
    assert torch.equal(a.train_batch(7, 8).inputs, b.train_batch(7, 8).inputs)
    assert not torch.equal(a.train_batch(7, 8).inputs, a.train_batch(8, 8).inputs)
    test_keys = {horn_generator.canonical_key(r) for r in a.test["all_seen"]}
    for step in range(30):
        assert not {horn_generator.canonical_key(r) for r in a.train_problems(step, 16)} & test_keys


class Oracle:
    """Writes the reference target of each prompt (or a wrong answer for some)."""

    def __init__(self, task: HornTask, wrong: set[int]) -> None:
        self.task, self.wrong = task, wrong
        self.answers = {}
        for recs in task.test.values():
            for r in recs:
                target = task.encode(horn_text.encode_target(r))
                if len(self.answers) in wrong:
                    flip = horn.FALSE if r["label"] else horn.TRUE
                    target = task.encode([horn.ANS, flip, horn.EOS])
                self.answers[tuple(task.encode(horn_text.encode_prompt(r)))] = target

    def __call__(self, ids):  # teacher-forced pass: uniform logits, every argmax is token 0
        return SimpleNamespace(logits=torch.zeros(*ids.shape, len(self.task.vocab)))

    def generate(self, prompts, max_new_tokens, eos_id, pad_id=0):
        return [self.answers[tuple(p)][:max_new_tokens] for p in prompts]


@pytest.fixture
def oracle_decoding(monkeypatch):
    """The task decodes with `generate(model, ...)`: an oracle's written answers stand in for it."""
    monkeypatch.setattr(
        horn_task, "generate", lambda oracle, *args, **kwargs: oracle.generate(*args, **kwargs)
    )


@pytest.mark.usefixtures("oracle_decoding")
def test_evaluate_scores_generated_outputs_per_scenario_and_depth():
    task = make(eval_batch_size=3)
    metrics = task.evaluate(Oracle(task, set()), torch.device("cpu"))
    for scenario in horn.SCENARIOS:
        for name in ("answer_accuracy", "exact_match", "proof_valid"):
            assert metrics[f"{scenario}/{name}"] == 1.0
        assert metrics[f"{scenario}/depth1/exact_match"] == 1.0
        assert metrics[f"{scenario}/token_accuracy"] == 0.0  # <pad> is never a target
        assert metrics[f"{scenario}/atoms_in_prompt"] == 1.0
    assert metrics["all_seen/atoms_seen_pool"] == 1.0 and metrics["all_unseen/atoms_seen_pool"] == 0.0
    wrong = Oracle(task, wrong={0, 1, 2, 3})  # the first four all_seen problems answered wrongly
    metrics = task.evaluate(wrong, torch.device("cpu"))
    assert metrics["all_seen/answer_accuracy"] == pytest.approx(4 / 8)
    assert metrics["all_seen/exact_match"] == pytest.approx(4 / 8)
    assert metrics["all_unseen/exact_match"] == 1.0


@pytest.mark.usefixtures("oracle_decoding")
def test_a_light_evaluation_reads_every_fourth_problem_of_each_scenario():
    task = make()
    wrong = Oracle(task, wrong={0, 4})  # all_seen problems 0 and 4: the two a light evaluation reads
    full = task.evaluate(wrong, torch.device("cpu"))
    light = task.evaluate(wrong, torch.device("cpu"), full=False)
    assert full["all_seen/exact_match"] == pytest.approx(6 / 8)
    assert light["all_seen/exact_match"] == 0.0
    assert light["all_unseen/exact_match"] == full["all_unseen/exact_match"] == 1.0


class TeacherForcedOracle:
    """Predicts every target token right except those of the roles in `miss`."""

    def __init__(self, task: HornTask, records, miss: set[str]) -> None:
        self.task, self.miss = task, miss
        self.targets = {}
        for r in records:
            prompt = task.encode(task.prompt_tokens(r))
            target = task.encode(horn_text.encode_target(r, task.labels))
            self.targets[tuple(prompt)] = (target, horn_text.target_roles(r, task.labels))

    def __call__(self, ids):
        logits = torch.zeros(*ids.shape, len(self.task.vocab))
        for row, seq in enumerate(ids.tolist()):
            seq = [t for t in seq if t != self.task.pad_id]
            for n_prompt in range(1, len(seq) + 1):
                if tuple(seq[:n_prompt]) in self.targets:
                    break
            target, roles = self.targets[tuple(seq[:n_prompt])]
            for i, (tok, role) in enumerate(zip(target, roles, strict=True)):
                guess = (tok + 1) % len(self.task.vocab) if role in self.miss else tok
                logits[row, n_prompt - 1 + i, guess] = 1
        return SimpleNamespace(logits=logits)


@pytest.mark.parametrize("labels", [False, True])
def test_token_accuracy_per_role_of_the_target_token(labels):
    task = make(rule_labels=labels)
    records = task.test["all_seen"]
    for r in records:
        assert len(horn_text.target_roles(r, labels)) == len(horn_text.encode_target(r, labels))
    device = torch.device("cpu")
    perfect = task.token_accuracy(TeacherForcedOracle(task, records, set()), records, device)
    assert perfect["token_accuracy"] == 1.0 and perfect["token_accuracy/head"] == 1.0
    assert ("token_accuracy/rule" in perfect) == labels
    miss = "rule" if labels else "head"
    missed = task.token_accuracy(TeacherForcedOracle(task, records, {miss}), records, device)
    assert missed[f"token_accuracy/{miss}"] == 0.0 and missed["token_accuracy/answer"] == 1.0
    n_missed = sum(len(r["proof"]) for r in records)
    n_tokens = sum(len(horn_text.encode_target(r, labels)) for r in records)
    assert missed["token_accuracy"] == pytest.approx(1 - n_missed / n_tokens)


def test_evaluate_runs_a_real_model_with_the_kv_cache():
    cfg = resolve(
        "horn-standard",
        [f"task.{k}={v}" for k, v in SMALL.items()] + ["model.d_model=32", "model.n_layers=1"],
    )
    from symgen.tasks.registry import make_task
    from symgen.training.build import build_model

    task = make_task(cfg.task, cfg.seed)
    metrics = task.evaluate(build_model(cfg, task), torch.device("cpu"))
    assert 0.0 <= metrics["all_unseen/exact_match"] <= 1.0
    assert task.headline_metric() in metrics


@pytest.mark.parametrize(
    "bad",
    [
        dict(n_test=0),
        dict(max_rules=1),
        dict(n_unseen=2),
        dict(eval_batch_size=0),
        dict(n_train=-1),
        dict(grow_steps=-1),
        dict(grow_steps=10, n_train=40),
    ],
)
def test_invalid_settings_are_user_errors(bad):
    with pytest.raises(UserError):
        HornTaskConfig(**(SMALL | bad)).validate()


def test_size_curriculum_grows_problems_to_full_size():
    task = make(grow_steps=100, max_rules=4, max_facts=3)
    first, middle, full = (task.train_problems(step, 32) for step in (0, 60, 100))
    assert {r["depth"] for r in first} == {1} and {len(r["rules"]) for r in first} == {2}
    assert max(len(r["facts"]) for r in first) == 2
    assert {r["depth"] for r in middle} == {1, 2} and max(len(r["rules"]) for r in middle) == 3
    assert {r["depth"] for r in full} == {1, 2} and max(len(r["rules"]) for r in full) == 4
    assert max(len(r["facts"]) for r in full) == 3
    # the curriculum does not change the problems after it, nor the test problems
    plain = make(max_rules=4, max_facts=3)
    assert plain.train_problems(100, 32) == full
    assert plain.test == task.test


def test_membership_problems_fill_their_share_of_training_batches_until_their_last_step():
    task = make(membership_share=0.25, membership_until=10, prompt_order="facts_first")
    batch = task.train_problems(3, 16)
    member = [r for r in batch if not r["rules"]]
    assert len(member) == 4 and sum(r["label"] for r in member) == 2
    for r in member:  # the query is one of the facts exactly when the label says so; nothing else to prove
        assert (r["query"] in r["facts"]) == r["label"] and r["proof"] == [] and r["depth"] == 0
        assert r["query"] in task.seen_pool and set(r["facts"]) <= set(task.seen_pool)
        assert horn_text.encode_target(r) == [horn.ANS, horn.TRUE if r["label"] else horn.FALSE, horn.EOS]
    assert all(r["rules"] for r in task.train_problems(10, 16))  # from membership_until on: none
    with pytest.raises(UserError, match="membership_share"):
        HornTaskConfig(membership_share=1.0).validate()


def test_the_matching_diagnostic_tells_a_head_that_matches_symbols_from_one_that_does_not():
    from symgen.models.transformer import ModelConfig, Transformer

    task = make(prompt_order="facts_first")
    records = task.test["all_seen"]
    cfg = dict(vocab_size=task.vocab_size, max_seq_len=task.max_seq_len, d_model=32, n_heads=2, n_layers=1)
    torch.manual_seed(0)
    plain = Transformer(ModelConfig(**cfg)).eval()
    matcher = Transformer(ModelConfig(**cfg, identity_bias=20.0, identity_bias_scope="symbols")).eval()
    matcher.restrict_same_symbol(task.seen_ids() + task.unseen_ids())
    plain_shares = task.matching(plain, records, torch.device("cpu"))
    matcher_shares = task.matching(matcher, records, torch.device("cpu"))
    assert plain_shares["match/best"] < 2 * plain_shares["match/uniform"]
    assert matcher_shares["match/best"] > 0.4 > plain_shares["match/best"]
