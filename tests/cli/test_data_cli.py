import json
from pathlib import Path

from conftest import symgen


def test_horn_data_written_checks_out_and_a_flipped_label_is_caught(tmp_path: Path):
    out = tmp_path / "horn"
    made = symgen("data", "horn", "--out", str(out), "--n-train", "300", "--n-test", "30")
    assert made.returncode == 0, made.stderr
    for name in ("train", "test_all_seen", "test_query_unseen", "test_all_unseen"):
        assert symgen("data", "check", str(out / f"{name}.jsonl")).returncode == 0
    whole = symgen("data", "check", str(out))  # the directory: every file in it
    assert whole.returncode == 0 and whole.stdout.count("records valid") == 4
    vocab = json.loads((out / "vocab.json").read_text())
    assert set(vocab) == {"special", "seen", "unseen"}

    lines = (out / "train.jsonl").read_text().splitlines()
    record = json.loads(lines[4])
    record["label"] = not record["label"]
    lines[4] = json.dumps(record)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    result = symgen("data", "check", str(bad))
    assert (
        result.returncode == 1 and f"{bad}:5: label" in result.stderr and len(result.stderr.splitlines()) == 1
    )
    seen = out / "test_all_seen.jsonl"
    kept = seen.read_text()
    seen.write_text("\n".join(line.replace('"scenario":"train"', '"scenario":"all_seen"') for line in lines))
    result = symgen("data", "check", str(out))
    assert result.returncode == 1 and f"{seen}:5: label" in result.stderr

    # train.jsonl copied in as a test file: its records say they are training records
    seen.write_text((out / "train.jsonl").read_text())
    assert one_line(symgen("data", "check", str(out))) == (
        f"symgen: invalid: {seen}:1: field 'scenario' is 'train', but test_all_seen.jsonl holds 'all_seen' "
        "records"
    )
    assert f"{seen}:1: field 'scenario'" in one_line(symgen("data", "check", str(seen)))
    seen.write_text(kept)

    (out / "test_query_unseen.jsonl").unlink()
    missing = symgen("data", "check", str(out))
    assert missing.returncode == 1 and one_line(missing) == (
        f"symgen: invalid: {out} is missing test_query_unseen.jsonl: a Horn dataset holds train.jsonl, "
        "test_all_seen.jsonl, test_query_unseen.jsonl, test_all_unseen.jsonl, vocab.json (as `symgen data "
        "horn` writes them)"
    )


def test_a_malformed_line_gives_the_whole_json_error_with_file_and_line(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"rules": "a\tb"}\n')
    result = symgen("data", "check", str(bad))
    assert result.returncode == 1
    assert (
        one_line(result)
        == f"symgen: invalid: {bad}:1: not valid JSON: Invalid control character at: column 13"
    )


def one_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode != 0 and "Traceback" not in result.stderr and len(lines) == 1, result.stderr
    return lines[0]


def test_binary_and_empty_files_are_refused_in_one_line(tmp_path: Path):
    binary, empty = tmp_path / "x.jsonl", tmp_path / "empty.jsonl"
    binary.write_bytes(bytes(range(256)) * 4)
    empty.write_text("")
    for path, message in ((binary, "not a text file"), (empty, "is empty")):
        result = symgen("data", "check", str(path))
        assert message in one_line(result) and result.returncode == 2


def test_kg_data_written_passes_the_audit(tmp_path: Path):
    out = tmp_path / "kg"
    args = ["--entities", "30", "--relations", "10", "--out-degree", "5", "--phi", "2", "--out", str(out)]
    assert symgen("data", "kg", "--setting", "systematic", *args).returncode == 0
    assert symgen("data", "check", str(out)).returncode == 0
    graph = json.loads((out / "graph.json").read_text())
    graph["facts"][0][2] = graph["facts"][1][2] if graph["facts"][0][2] != graph["facts"][1][2] else "e0"
    (out / "graph.json").write_text(json.dumps(graph))
    assert symgen("data", "check", str(out)).returncode == 1
    (out / "graph.json").write_bytes(bytes(range(256)) * 4)
    result = symgen("data", "check", str(out))
    assert "graph.json is not a text file" in one_line(result) and result.returncode == 2
