"""`data kg` refuses an option of the other setting instead of ignoring it."""

from pathlib import Path

import pytest
from conftest import symgen


@pytest.mark.parametrize(
    ("setting", "option", "value"),
    [
        ("depth", "--phi", "3"),
        ("depth", "--out-degree", "5"),
        ("depth", "--ood-fraction", "0.1"),
        ("systematic", "--max-hops", "4"),
        ("systematic", "--per-hop", "10"),
        ("systematic", "--test-per-hop", "10"),
    ],
)
def test_an_option_of_the_other_setting_is_refused_in_one_line(tmp_path: Path, setting, option, value):
    result = symgen("data", "kg", "--setting", setting, option, value, "--out", str(tmp_path / "kg"))
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1
    assert f"data kg: {option} applies to --setting" in result.stderr and f"not {setting}" in result.stderr
    assert not (tmp_path / "kg").exists()
