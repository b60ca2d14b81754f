"""Weight soups on tiny checkpoints: exact averages, sharding, evidence and refusals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from rsi_hub.cli import main
from rsi_hub.errors import OutputDirNotEmptyError, RsiHubError
from rsi_hub.experiments.shards import INDEX_FILE, parse_size, read_layout
from rsi_hub.experiments.soup import SoupMismatchError, normalise_weights, soup
from rsi_hub.hashing import weights_sha256


@pytest.fixture(scope="module")
def second_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny run with the same architecture and tokenizer as `tiny_run` but other weights."""
    from rsi_hub.tiny import build_tiny

    return build_tiny(tmp_path_factory.mktemp("tiny-b") / "run", seed=1)


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    if (folder / "model.safetensors").is_file():
        return load_file(folder / "model.safetensors")
    tensors: dict[str, torch.Tensor] = {}
    for shard in sorted(set(json.loads((folder / INDEX_FILE).read_text())["weight_map"].values())):
        tensors.update(load_file(folder / shard))
    return tensors


def test_uniform_soup_is_the_exact_elementwise_average(
    tiny_run: Path, second_run: Path, tmp_path: Path
) -> None:
    before = [weights_sha256(r) for r in (tiny_run, second_run)]
    report = soup([tiny_run, second_run], tmp_path / "soup", max_shard_size="200KB")
    # The ingredients are read through memory maps and never written.
    assert [weights_sha256(r) for r in (tiny_run, second_run)] == before
    a, b, s = _weights(tiny_run), _weights(second_run), _weights(tmp_path / "soup")
    assert sorted(s) == sorted(a)
    for name in a:
        # Exact for FP32 inputs: halving is exact, so both sides round the same sum once.
        assert torch.equal(s[name], (a[name] + b[name]) / 2), name
        assert s[name].dtype == torch.float32
    assert len(report.shards) > 1
    index = json.loads((tmp_path / "soup" / INDEX_FILE).read_text())
    assert set(index["weight_map"].values()) == set(report.shards)
    assert index["metadata"]["total_size"] == report.total_bytes


def test_soup_is_a_loadable_run_directory_with_evidence(
    tiny_run: Path, second_run: Path, tmp_path: Path
) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = tmp_path / "soup"
    assert main([
        "soup", str(tiny_run), str(second_run), "--out", str(out),
        "--weights", "0.25,0.75", "--max-shard-size", "300KB",
    ]) == 0  # fmt: skip
    model = AutoModelForCausalLM.from_pretrained(out)
    assert model.config.model_type == "nemotron_h"
    assert AutoTokenizer.from_pretrained(out).eos_token == "<|im_end|>"
    evidence = json.loads((out / "training_evidence.json").read_text())
    assert [(i["name"], i["weight"]) for i in evidence["ingredients"]] == [
        (tiny_run.name, 0.25),
        (second_run.name, 0.75),
    ]
    for entry, run in zip(evidence["ingredients"], (tiny_run, second_run), strict=True):
        assert entry["weights_sha256"] == weights_sha256(run)
    assert evidence["weights_sha256"] == weights_sha256(out)
    a, b, s = _weights(tiny_run), _weights(second_run), _weights(out)
    for name in a:
        torch.testing.assert_close(s[name], 0.25 * a[name] + 0.75 * b[name])
    for name in ("config.json", "tokenizer.json", "chat_template.jinja", "system_prompt.txt"):
        assert (out / name).read_bytes() == (tiny_run / name).read_bytes()


def test_ingredients_with_different_shard_layouts(
    tiny_run: Path, second_run: Path, tmp_path: Path
) -> None:
    # A sharded soup is itself an ingredient of a second soup with the single-file tiny run.
    soup([tiny_run, second_run], tmp_path / "sharded", max_shard_size="100KB")
    soup([tiny_run, tmp_path / "sharded"], tmp_path / "again", max_shard_size="1MB")
    a, b, s = _weights(tiny_run), _weights(second_run), _weights(tmp_path / "again")
    for name in a:
        torch.testing.assert_close(s[name], 0.75 * a[name] + 0.25 * b[name])


def _synthetic(folder: Path, tensors: dict[str, torch.Tensor], config: dict | None = None) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(config or {"model_type": "synthetic"}))
    save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})
    return folder


def test_bf16_ingredients_are_accumulated_in_fp32(tmp_path: Path) -> None:
    gen = torch.Generator().manual_seed(0)
    xs = [torch.randn(64, 64, generator=gen).to(torch.bfloat16) for _ in range(3)]
    runs = [_synthetic(tmp_path / f"r{i}", {"w": x}) for i, x in enumerate(xs)]
    soup(runs, tmp_path / "soup", [0.2, 0.3, 0.5])
    out = _weights(tmp_path / "soup")["w"]
    exact = 0.2 * xs[0].double() + 0.3 * xs[1].double() + 0.5 * xs[2].double()
    # Accumulated in FP32 then rounded once: within half a BF16 ulp (2^-8 relative) of the exact
    # sum. Accumulating in BF16 rounds four times and breaks that bound somewhere.
    bound = exact.abs() * 2.0**-8 + 1e-6
    assert out.dtype == torch.bfloat16
    assert bool(((out.double() - exact).abs() <= bound).all())
    naive = 0.2 * xs[0] + 0.3 * xs[1] + 0.5 * xs[2]
    assert not bool(((naive.double() - exact).abs() <= bound).all())


def _copy(run: Path, dest: Path) -> Path:
    shutil.copytree(run, dest)
    return dest


def test_config_mismatch_names_the_key(tiny_run: Path, tmp_path: Path) -> None:
    other = _copy(tiny_run, tmp_path / "other")
    config = json.loads((other / "config.json").read_text())
    config["initializer_range"] = 0.5
    config["transformers_version"] = "0.0"  # ignored: who saved it, not what it is
    (other / "config.json").write_text(json.dumps(config))
    with pytest.raises(SoupMismatchError, match=r"initializer_range is 0\.02 against 0\.5"):
        soup([tiny_run, other], tmp_path / "soup")
    assert not (tmp_path / "soup").exists()


def test_tokenizer_mismatch_names_the_file_and_key(tiny_run: Path, tmp_path: Path) -> None:
    other = _copy(tiny_run, tmp_path / "other")
    tok = json.loads((other / "tokenizer_config.json").read_text())
    tok["model_max_length"] = 17
    (other / "tokenizer_config.json").write_text(json.dumps(tok))
    with pytest.raises(SoupMismatchError, match=r"tokenizer_config\.json.*model_max_length"):
        soup([tiny_run, other], tmp_path / "soup")


def test_tensor_set_mismatch_names_the_tensor(tmp_path: Path) -> None:
    a = _synthetic(tmp_path / "a", {"x": torch.zeros(2), "y": torch.zeros(3)})
    b = _synthetic(tmp_path / "b", {"x": torch.zeros(2), "z": torch.zeros(3)})
    with pytest.raises(SoupMismatchError, match=r"tensor sets differ: y is in .*a but not in"):
        soup([a, b], tmp_path / "soup")
    c = _synthetic(tmp_path / "c", {"x": torch.zeros(2), "y": torch.zeros(4)})
    with pytest.raises(SoupMismatchError, match=r"tensor y is F32\[3\] in .* but F32\[4\]"):
        soup([a, c], tmp_path / "soup")
    d = _synthetic(tmp_path / "d", {"x": torch.zeros(2), "y": torch.zeros(3, dtype=torch.float16)})
    with pytest.raises(SoupMismatchError, match=r"tensor y is F32\[3\] in .* but F16\[3\]"):
        soup([a, d], tmp_path / "soup")


def test_integer_tensors_must_agree(tmp_path: Path) -> None:
    a = _synthetic(tmp_path / "a", {"n": torch.tensor([1, 2]), "w": torch.ones(2)})
    b = _synthetic(tmp_path / "b", {"n": torch.tensor([1, 2]), "w": torch.zeros(2)})
    soup([a, b], tmp_path / "ok")
    assert torch.equal(_weights(tmp_path / "ok")["n"], torch.tensor([1, 2]))
    c = _synthetic(tmp_path / "c", {"n": torch.tensor([1, 3]), "w": torch.zeros(2)})
    with pytest.raises(SoupMismatchError, match="integer tensor n differs"):
        soup([a, c], tmp_path / "bad")


def test_weights_are_checked() -> None:
    assert normalise_weights(None, 4) == [0.25] * 4
    with pytest.raises(RsiHubError, match="sum to 1"):
        normalise_weights([0.5, 0.6], 2)
    with pytest.raises(RsiHubError, match="3 weights for 2"):
        normalise_weights([0.2, 0.3, 0.5], 2)
    with pytest.raises(RsiHubError, match="at least two"):
        normalise_weights(None, 1)


def test_refuses_a_non_empty_output(tiny_run: Path, second_run: Path, tmp_path: Path) -> None:
    (tmp_path / "soup").mkdir()
    (tmp_path / "soup" / "keep.txt").write_text("x")
    with pytest.raises(OutputDirNotEmptyError):
        soup([tiny_run, second_run], tmp_path / "soup")


def test_sizes_and_layout(tiny_run: Path) -> None:
    assert parse_size("5GB") == 5 * 10**9
    assert parse_size("2GiB") == 2 * 2**30
    assert parse_size("500mb") == 500 * 10**6
    assert parse_size(123) == 123
    layout = read_layout(tiny_run)
    assert layout["lm_head.weight"].shape == (1024, 64)
    assert layout["lm_head.weight"].nbytes == 1024 * 64 * 4
