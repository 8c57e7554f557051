import json

from symgen.tasks import checker
from symgen.tasks.horn import HornConfig, build_vocab
from symgen.tasks.horn_io import write_dataset
from symgen.tasks.vocab import Vocab


def test_write_dataset(tmp_path):
    cfg = HornConfig(n_train=200, n_test=40, seed=2)
    summary = write_dataset(cfg, tmp_path / "data")
    files = sorted(p.name for p in (tmp_path / "data").iterdir())
    assert files == sorted(
        [
            "train.jsonl",
            "test_all_seen.jsonl",
            "test_query_unseen.jsonl",
            "test_all_unseen.jsonl",
            "vocab.json",
        ]
    )
    for name in ("train", "test_all_seen", "test_query_unseen", "test_all_unseen"):
        assert checker.check_file(tmp_path / "data" / f"{name}.jsonl") == summary["splits"][name]["n"]
    assert summary["splits"]["train"]["n"] == 200
    assert summary["splits"]["train"]["frac_true"] == 0.5
    assert set(summary["splits"]["train"]["depth_hist"]["false"]) == {1, 2, 3}
    assert 0.0 <= summary["audit_accuracy"] <= 1.0
    vocab = Vocab.load(tmp_path / "data" / "vocab.json")
    assert vocab == build_vocab(cfg)
    assert list(json.loads((tmp_path / "data" / "vocab.json").read_text())) == ["special", "seen", "unseen"]
