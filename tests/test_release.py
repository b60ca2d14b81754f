"""`rsi-hub release` staging and validation on the tiny checkpoint."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from rsi_hub.cli import main
from rsi_hub.errors import ReleaseError, ServingContractError
from rsi_hub.hashing import weights_sha256
from rsi_hub.release import load_facts, read_manifest, release_problems, stage_release
from rsi_hub.release.evidence import evidence_problems
from rsi_hub.release.manifest import MANIFEST_FILE
from rsi_hub.release.validate import _load_problems
from rsi_hub.rundir import EvalMeta, TrainingEvidence

EXPECTED_FILES = {
    "LICENSE",
    "README.md",
    "chat_template.jinja",
    "config.json",
    "generation_config.json",
    "model.safetensors",
    MANIFEST_FILE,
    "serving_config.json",
    "system_prompt.txt",
    "tokenizer.json",
    "tokenizer_config.json",
    "training_evidence.json",
}


def quiet(_: str) -> None:
    pass


@pytest.fixture
def run(tiny_run: Path, tmp_path: Path) -> Path:
    """A writable copy of the tiny run (hard links would let a test edit the shared fixture)."""
    return Path(shutil.copytree(tiny_run, tmp_path / "run"))


def _stage(run: Path, **kwargs: object):
    return stage_release(run, name="tiny", log=quiet, **kwargs)


def _edit_json(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def _write_eval(run: Path, suite: str, weights: str | None, metrics: dict, n: int = 5) -> Path:
    """A finished evaluation as `rsi-hub eval` leaves it (evaluate's own writer)."""
    from rsi_hub.evaluate.store import write_suite_dir

    results = {"results": {suite: {f"{k},none": v for k, v in metrics.items()}}}
    meta = EvalMeta(suite=suite, limit=n, n_samples={suite: n}, weights_sha256=weights)
    return write_suite_dir(run, suite, results, {suite: []}, meta)


def test_stage_layout_hardlinks_manifest(run: Path) -> None:
    staged = _stage(run)
    folder = staged.folder
    assert folder == run.parent / "release-tiny"
    assert {p.name for p in folder.iterdir()} == EXPECTED_FILES
    assert staged.link_mode == "hardlink"
    assert (folder / "model.safetensors").stat().st_ino == (run / "model.safetensors").stat().st_ino
    manifest = read_manifest(folder)
    assert set(manifest.files) == EXPECTED_FILES - {MANIFEST_FILE}
    for rel, entry in manifest.files.items():
        data = (folder / rel).read_bytes()
        assert entry.size == len(data)
        assert entry.sha256 == hashlib.sha256(data).hexdigest()
    assert manifest.weights_sha256 == weights_sha256(run)
    assert (folder / "LICENSE").read_text() == (load_facts("tiny").folder / "LICENSE").read_text()
    assert release_problems(folder, staged.facts, load_model=False) == []


def test_staging_twice_gives_the_same_bytes(run: Path) -> None:
    first = _stage(run).folder / MANIFEST_FILE
    text = first.read_text()
    assert (_stage(run).folder / MANIFEST_FILE).read_text() == text


def test_copies_when_hard_links_fail_and_validates(run: Path, monkeypatch) -> None:
    def no_link(src: object, dst: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_link)
    staged = _stage(run)
    assert staged.link_mode == "copy"
    shard = staged.folder / "model.safetensors"
    assert shard.stat().st_ino != (run / "model.safetensors").stat().st_ino
    assert release_problems(staged.folder, staged.facts, load_model=False) == []


def test_a_copy_that_does_not_match_the_hashed_source_is_refused(
    tmp_path: Path, monkeypatch
) -> None:
    from rsi_hub.release.stage import link_or_copy

    def no_link(src: object, dst: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_link)
    src = tmp_path / "model.safetensors"
    src.write_bytes(b"weights")
    with pytest.raises(ReleaseError, match="changed while it was being staged"):
        link_or_copy(src, tmp_path / "copy.safetensors", hashlib.sha256(b"other").hexdigest())


def test_auto_map_is_stripped(run: Path) -> None:
    _edit_json(run / "config.json", auto_map={"AutoModelForCausalLM": "modeling_x.NemotronH"})
    staged = _stage(run)
    assert "auto_map" not in json.loads((staged.folder / "config.json").read_text())
    assert any("auto_map" in note for note in staged.notes)


def test_eval_results_fill_the_card(run: Path) -> None:
    _write_eval(run, "if818", weights_sha256(run), {"pass_count": 3.0, "acc": 0.6})
    _write_eval(run, "pref", weights_sha256(run), {"acc_norm": 0.25, "acc": 0.5})
    staged = _stage(run)
    readme = (staged.folder / "README.md").read_text()
    assert "| tiny (uploaded) | 3/5 | — | — | 0.2500 | — |" in readme
    assert "| if818 | 3/5 | 5 | 5 |" in readme
    assert staged.results["if818"].passed == 3


def test_refuses_results_of_other_weights(run: Path) -> None:
    folder = _write_eval(run, "if818", "0" * 64, {"pass_count": 3.0})
    with pytest.raises(ReleaseError, match=f"{folder / 'meta.json'}: scored weights 000000000000"):
        _stage(run)
    assert not (run.parent / "release-tiny").exists()


def test_refuses_results_bound_to_no_weights(run: Path) -> None:
    _write_eval(run, "ev4", None, {"checks_passed": 1.0, "checks_total": 2.0})
    with pytest.raises(ReleaseError, match="weights_sha256 is missing"):
        _stage(run)


def test_refuses_incomplete_evidence(run: Path) -> None:
    evidence = json.loads((run / "training_evidence.json").read_text())
    del evidence["seed"]
    evidence["optimizer_steps"] = None
    (run / "training_evidence.json").write_text(json.dumps(evidence))
    with pytest.raises(ReleaseError) as info:
        _stage(run)
    assert "training_evidence.json: field 'seed' is missing" in str(info.value)
    assert "field 'optimizer_steps' is missing or empty" in str(info.value)
    assert not (run.parent / "release-tiny").exists()


def _card_evidence() -> dict:
    """Evidence as `rsi-hub train` writes it for the run the LA2b200s card describes."""
    return {
        "kind": "rsi-hub training run",
        "status": "completed",
        "base_model": {
            "id": "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-Base-BF16",
            "revision": "434456c9a6753f29d24e23c95d622aaf17111b3b",
        },
        "slurm": {"job_id": "5773", "state": "COMPLETED"},
        "optimizer_steps": 200,
        "data": {"mix": "iflensyn:33000", "dataset_sha256": "7076902b" + "0" * 56},
        "hyperparameters": {"learning_rate": 4e-7},
        "seed": 981,
        "libraries": {"torch": "2.13.0"},
    }


def test_la2b200s_evidence_must_state_what_the_card_states() -> None:
    facts = load_facts("LA2b200s")
    assert evidence_problems(TrainingEvidence.from_json(_card_evidence()), facts, "e.json") == []
    evidence = _card_evidence()
    evidence["slurm"]["state"] = "FAILED"
    evidence["data"]["dataset_sha256"] = "ffff" + "0" * 60
    del evidence["base_model"]["revision"]
    problems = evidence_problems(TrainingEvidence.from_json(evidence), facts, "e.json")
    assert len(problems) == 3
    assert "field 'slurm.state' is 'FAILED' but the card states 'COMPLETED'" in problems[1]
    assert "field 'data.dataset_sha256'" in problems[2] and "7076902b…" in problems[2]
    assert "field 'base_model.revision' is missing" in problems[0]


def test_refuses_a_run_breaking_the_serving_contract(run: Path) -> None:
    (run / "chat_template.jinja").write_text("{{ messages }}")
    with pytest.raises(ServingContractError, match=r"chat_template\.jinja: differs"):
        _stage(run)


def test_refuses_a_non_empty_foreign_out(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    for force in (False, True):  # --force never deletes a folder that staging did not make
        with pytest.raises(ReleaseError, match="not a staged release"):
            _stage(run, out=out, force=force)
        assert (out / "keep.txt").read_text() == "x"


def test_validation_names_each_broken_file(run: Path) -> None:
    staged = _stage(run)
    folder = staged.folder
    # A corrupted shard (same size), a config that regained auto_map, an extra file.
    shard = folder / "model.safetensors"
    data = bytearray(run.joinpath("model.safetensors").read_bytes())
    shard.unlink()  # break the hard link so the run stays intact
    data[-1] ^= 0xFF
    shard.write_bytes(bytes(data))
    _edit_json(folder / "config.json", auto_map={"AutoModel": "x.Y"})
    (folder / "notes.txt").write_text("stray")
    problems = release_problems(folder, staged.facts, load_model=False)
    text = "\n".join(problems)
    assert f"{shard}: sha256" in text
    assert f"{folder / 'config.json'}: has auto_map" in text
    assert f"{folder / 'notes.txt'}: not listed in {MANIFEST_FILE}" in text
    assert all("rsi-hub release" in p or "remove it" in p for p in problems)


def test_validation_reports_missing_shard_of_a_sharded_run(tiny_run: Path, tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM

    run = Path(shutil.copytree(tiny_run, tmp_path / "run"))
    (run / "model.safetensors").unlink()
    AutoModelForCausalLM.from_pretrained(tiny_run).save_pretrained(run, max_shard_size="400KB")
    index = json.loads((run / "model.safetensors.index.json").read_text())
    shards = sorted(set(index["weight_map"].values()))
    assert len(shards) > 1
    staged = _stage(run)
    assert release_problems(staged.folder, staged.facts) == []
    (staged.folder / shards[-1]).unlink()
    problems = release_problems(staged.folder, staged.facts, load_model=False)
    assert any(f"{shards[-1]}: listed in {MANIFEST_FILE} but missing" in p for p in problems)


def test_load_probe_detects_a_missing_stop_id_and_a_broken_config(run: Path) -> None:
    _edit_json(run / "generation_config.json", eos_token_id=[11])
    problems = _load_problems(run)
    assert len(problems) == 1 and "did not stop on id 2" in problems[0]
    _edit_json(run / "config.json", hidden_size=72)
    problems = _load_problems(run)
    assert "transformers.pipeline cannot load it" in problems[0]


def test_cli_dry_run_prints_the_commit(tiny_run: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "staged"
    assert main(["release", str(tiny_run), "--name", "tiny", "--out", str(out), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "pipeline load, stops on 11 and 2" in printed
    assert "would create RSIArena/RSIAgent-Delta-tiny (private)" in printed
    for name in EXPECTED_FILES:
        assert f"  add {name}\n" in printed


def test_cli_push_hint_repeats_the_options(tiny_run: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "staged folder"
    assert main(["release", str(tiny_run), "--name", "tiny", "--out", str(out), "--public"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == (
        f"staged and validated {out}; push it with: rsi-hub release {tiny_run} --name tiny "
        f"--out '{out}' --public --push"
    )


def test_staged_files_are_readable_by_all(run: Path) -> None:
    """transformers writes weights 0600; a release folder is for others to read."""
    folder = _stage(run).folder
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
    assert modes == dict.fromkeys(EXPECTED_FILES, 0o644)


def test_cli_error_names_the_file(run: Path, capsys) -> None:
    (run / "training_evidence.json").unlink()
    assert main(["release", str(run), "--name", "tiny"]) == 2
    assert "training_evidence.json" in capsys.readouterr().err
