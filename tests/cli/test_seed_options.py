"""`--seeds` names seeds in every command (a list or a range); a count never looks like a list."""

from pathlib import Path

import pytest
from conftest import symgen

from symgen.cli.seeds import parse_seeds, suite_seeds, text_of
from symgen.errors import UserError


def one_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and "Traceback" not in result.stderr and len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("text", "seeds"),
    [("0,1,2", [0, 1, 2]), ("0-2", [0, 1, 2]), ("3 - 5", [3, 4, 5]), ("0-2,7", [0, 1, 2, 7]), ("7", [7])],
)
def test_seeds_are_a_list_or_a_range(text: str, seeds: list[int]):
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize(
    ("text", "message"), [("5-3", "runs downward; write 3-5"), ("0-2,1", "repeated"), ("-1", ">= 0")]
)
def test_bad_ranges_are_refused(text: str, message: str):
    with pytest.raises(UserError, match=message):
        parse_seeds(text)


def test_reproduce_refuses_a_bare_number_saying_how_to_write_it():
    with pytest.raises(UserError, match="not a count: write --seeds 0-6 for the 7 seeds 0 to 6, --seeds 7-7"):
        suite_seeds("7")
    assert suite_seeds("3,4,5") == suite_seeds("3-5") == (3, 4, 5) and suite_seeds(None) is None
    assert suite_seeds("7,") == (7,)
    assert [text_of(s) for s in ((0, 1, 2), (3, 5), (4,))] == ["0-2", "3,5", "4-4"]


def test_reproduce_seeds_7_is_refused_before_anything_is_written(tmp_path: Path):
    out = tmp_path / "r"
    line = one_line(
        symgen("reproduce", "--suite", "smoke", "--only", "reverse", "--seeds", "7", "--out", str(out))
    )
    assert "--seeds 0-6" in line and not out.exists()


def test_list_shows_the_seeds_each_run_trains():
    args = ["reproduce", "--suite", "smoke", "--only", "reverse", "--list"]
    listed = symgen(*args, "--seeds", "3-5")
    assert listed.returncode == 0, listed.stderr
    last = listed.stdout.splitlines()[-1]
    assert (
        last
        == "seeds (--seeds 3-5): every run trains seeds 3, 4, 5 as one stacked model, in OUT/runs/RUN/seed-N"
    )
    default = symgen(*args).stdout.splitlines()[-1]
    assert default == "seeds (the smoke suite's default): every run trains seed 0, in OUT/runs/RUN"
    paper = symgen("reproduce", "--suite", "paper", "--only", "reverse", "--list").stdout.splitlines()[-1]
    assert "seeds 0, 1, 2 as one stacked model" in paper


def test_conflicting_seed_settings_are_refused(tmp_path: Path):
    out = tmp_path / "r"
    reproduce = ["reproduce", "--suite", "smoke", "--only", "reverse", "--out", str(out)]
    assert "--seeds 5-5" in one_line(symgen(*reproduce, "--set", "seed=5", "--seeds", "0-1"))
    assert "--seeds 5-5" in one_line(symgen(*reproduce, "--set", "seed=5"))  # records seed 0 otherwise
    train = one_line(symgen("train", "reverse", "seed=3", "--seeds", "0,1", "--out", str(out)))
    assert "seed=3 and --seeds 0,1 both set the seed" in train
    assert not out.exists()
