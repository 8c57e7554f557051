"""`data check` on a Horn dataset holds its seen/unseen split to vocab.json; a folder that is no
dataset is a usage error (exit 2)."""

import json
from pathlib import Path

import pytest
from conftest import symgen

from symgen.errors import UserError
from symgen.tasks.checker import check_split
from symgen.tasks.horn import SPECIAL_TOKENS, HornConfig
from symgen.tasks.horn_io import write_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("horn")
    write_dataset(HornConfig(n_seen=20, n_unseen=10, max_rules=5, n_train=40, n_test=8), out)
    return out


def copy(dataset: Path, to: Path) -> Path:
    to.mkdir()
    for f in dataset.iterdir():
        (to / f.name).write_text(f.read_text())
    return to


def rename(record: dict, old: str, new: str) -> dict:
    """The same problem with symbol `old` renamed `new` everywhere: still a valid record."""
    return json.loads(json.dumps(record).replace(f'"{old}"', f'"{new}"'))


def rewrite(path: Path, line: int, change) -> None:
    lines = path.read_text().splitlines()
    lines[line - 1] = json.dumps(change(json.loads(lines[line - 1])))
    path.write_text("\n".join(lines) + "\n")


def symbols(record: dict) -> set[str]:
    return {a for r in record["rules"] for a in (*r["body"], r["head"])} | set(record["facts"])


def vocab(folder: Path) -> dict:
    return json.loads((folder / "vocab.json").read_text())


def test_a_written_dataset_keeps_its_split(dataset: Path):
    assert check_split(dataset, SPECIAL_TOKENS) == (20, 10)


def test_a_training_query_renamed_to_an_unseen_symbol_fails_naming_file_and_line(
    dataset: Path, tmp_path: Path
):
    bad = copy(dataset, tmp_path / "bad")
    unseen = vocab(bad)["unseen"][0]
    rewrite(bad / "train.jsonl", 3, lambda r: rename(r, r["query"], unseen))
    assert symgen("data", "check", str(bad / "train.jsonl")).returncode == 0  # valid as a record
    result = symgen("data", "check", str(bad))
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 1 and len(lines) == 1
    assert lines[0] == (
        f"symgen: invalid: {bad / 'train.jsonl'}:3: atom {unseen!r} is unseen, but train.jsonl holds no "
        "unseen symbols"
    )


def test_each_test_scenario_holds_its_own_symbols(dataset: Path, tmp_path: Path):
    groups = vocab(dataset)
    seen_query = tmp_path / "q"
    copy(dataset, seen_query)
    first = json.loads((seen_query / "test_query_unseen.jsonl").read_text().splitlines()[0])
    free_seen = next(s for s in groups["seen"] if s not in symbols(first))
    rewrite(seen_query / "test_query_unseen.jsonl", 1, lambda r: rename(r, r["query"], free_seen))
    with pytest.raises(UserError, match=r"test_query_unseen.jsonl:1: the query .* is a seen symbol"):
        check_split(seen_query, SPECIAL_TOKENS)

    seen_atom = copy(dataset, tmp_path / "u")
    first = json.loads((seen_atom / "test_all_unseen.jsonl").read_text().splitlines()[1])
    free_seen = next(s for s in groups["seen"] if s not in symbols(first))
    rewrite(seen_atom / "test_all_unseen.jsonl", 2, lambda r: rename(r, r["facts"][0], free_seen))
    with pytest.raises(UserError, match=r"test_all_unseen.jsonl:2: atom .* is seen, but .* only unseen"):
        check_split(seen_atom, SPECIAL_TOKENS)

    stray = copy(dataset, tmp_path / "s")
    rewrite(stray / "test_all_seen.jsonl", 4, lambda r: rename(r, r["facts"][0], "v999"))
    with pytest.raises(UserError, match=r"test_all_seen.jsonl:4: atom 'v999' is in no group of vocab.json"):
        check_split(stray, SPECIAL_TOKENS)


def test_vocab_json_must_be_complete(dataset: Path, tmp_path: Path):
    bad = copy(dataset, tmp_path / "v")
    (bad / "vocab.json").write_text('{"special": []}')
    result = symgen("data", "check", str(bad))
    assert result.returncode == 1 and "vocab.json: group 'seen' is missing" in result.stderr
    groups = vocab(dataset)
    for broken, message in [
        (groups | {"special": groups["special"][1:]}, "special token '<pad>' is missing"),
        (groups | {"unseen": groups["unseen"][1:]}, "is in no group of vocab.json"),
        (groups | {"seen": [*groups["seen"], groups["unseen"][0]]}, "is in another group too"),
    ]:
        (bad / "vocab.json").write_text(json.dumps(broken))
        with pytest.raises(UserError, match=message):
            check_split(bad, SPECIAL_TOKENS)


def test_a_folder_of_no_dataset_is_a_usage_error(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("read the paper")
    for folder, message in (("empty", "is an empty folder"), ("notes", "without graph.json or vocab.json")):
        result = symgen("data", "check", str(tmp_path / folder))
        assert result.returncode == 2 and message in result.stderr and len(result.stderr.splitlines()) == 1
