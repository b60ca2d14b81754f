"""`rsi_hub.rundir`: the run-directory contract (file names, typed records, versions, hash).

The `rundir_v0` files were written by the code before `rsi_hub.rundir` existed (tiny evidence,
synthesis provenance, sweep and release manifests by that code itself; the eval meta by hand
with the runner's keys): today's readers must still read them.
"""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

import rsi_hub
from rsi_hub import hashing, rundir
from rsi_hub.errors import RsiHubError, RunDirError, RunFileMissingError
from rsi_hub.rundir import (
    EvalMeta,
    FileEntry,
    ReleaseManifest,
    SweepArm,
    SweepManifest,
    SynthProvenance,
    TrainingEvidence,
)

V0 = Path(__file__).parent / "data" / "rundir_v0"
PACKAGE = Path(rsi_hub.__file__).parent


def _v0(name: str, tmp_path: Path) -> Path:
    """A copy of one version-0 file in a fresh folder, under its own name."""
    shutil.copy(V0 / name, tmp_path / name)
    return tmp_path


def test_version_0_evidence_reads_and_round_trips_every_key(tmp_path: Path) -> None:
    old = json.loads((V0 / "training_evidence.json").read_text())
    evidence = TrainingEvidence.read(_v0("training_evidence.json", tmp_path))
    assert evidence.kind.startswith("tiny random-init checkpoint")
    assert (evidence.seed, evidence.optimizer_steps, evidence.base_model) == (0, 0, None)
    assert evidence.extra["parameters"] == 253932 and evidence.extra["model_type"] == "nemotron_h"
    assert evidence.status is None and not evidence.completed
    evidence.write(tmp_path)
    again = json.loads((tmp_path / "training_evidence.json").read_text())
    assert again["schema_version"] == rundir.SCHEMA_VERSION == 1
    # Every old key survives with its value; typed fields absent before are written as null.
    assert {k: again[k] for k in old} == old
    assert {k for k in again if k not in old} == {
        "schema_version", "status", "run", "method", "weights_sha256", "slurm", "data",
        "hyperparameters", "recipe", "loss", "attempts", "ingredients", "start_time", "end_time",
    }  # fmt: skip
    assert all(again[k] is None for k in set(again) - set(old) - {"schema_version"})


def test_version_0_eval_meta_reads(tmp_path: Path) -> None:
    meta = EvalMeta.read(_v0("meta.json", tmp_path))
    assert (meta.suite, meta.limit, meta.served_configuration) == ("if818", 5, True)
    assert meta.weights_sha256 == "9d6f3c8a0a3c35e0d5e0b7e1a5a4c3f0a6a2d1c2b3e4f5a6b7c8d9e0f1a2b3c4"
    assert meta.generation == {
        "until": ["<|im_end|>"], "max_gen_toks": 2048, "do_sample": False, "temperature": 0.0,
    }  # fmt: skip
    assert meta.extra["model_args"]["pretrained"] == "/work/runs/tiny"
    assert meta.extra["seconds"] == 12.5


def test_version_0_provenance_reads(tmp_path: Path) -> None:
    provenance = SynthProvenance.read(_v0("provenance.json", tmp_path))
    assert (provenance.kind, provenance.data_file, provenance.rows_kept) == (
        "lensyn", "data.jsonl", 1,
    )  # fmt: skip
    assert provenance.audit_passed and provenance.malformed == 0
    assert provenance.prompt_ids == ["p1"] and provenance.extra == {}
    assert provenance.versions is not None and provenance.versions["rsi_hub"] == "0.1.0"


def test_version_0_sweep_manifest_reads_by_file_or_folder(tmp_path: Path) -> None:
    folder = _v0("sweep.json", tmp_path)
    for where in (folder, folder / "sweep.json"):
        manifest = SweepManifest.read(where)
        assert (manifest.recipe, manifest.mode) == ("simpoN", "slurm")
        assert manifest.grid == {"max_steps": ["100", "200"]}
        assert manifest.points == {
            "LA2b100s": {"max_steps": "100"}, "LA2b200s": {"max_steps": "200"},
        }  # fmt: skip
        assert [arm.run_dir for arm in manifest.arms] == ["runs/LA2b100s", "runs/LA2b200s"]
        assert manifest.arms[1].extra["jobs"] == {"train": "101", "eval": "102"}
    # Rewritten, each arm keeps every key it had.
    old = json.loads((V0 / "sweep.json").read_text())
    manifest.write(tmp_path / "again")
    again = json.loads((tmp_path / "again" / "sweep.json").read_text())
    assert again["arms"] == [{**arm} for arm in old["arms"]]


def test_version_0_release_manifest_reads_its_version_key(tmp_path: Path) -> None:
    manifest = ReleaseManifest.read(_v0("release_manifest.json", tmp_path))
    assert manifest.files["model.safetensors"] == FileEntry(2048, "0" * 64)
    assert manifest.total_bytes == 2058 and manifest.extra == {}
    text = json.dumps(manifest.to_json())
    assert '"version"' not in text and manifest.to_json()["schema_version"] == 1


def test_release_manifest_bytes_do_not_depend_on_insertion_order(tmp_path: Path) -> None:
    files = {"b": FileEntry(1, "1" * 64), "a": FileEntry(2, "2" * 64)}
    one = ReleaseManifest("n", "o/r", "w" * 64, files).write(tmp_path / "one")
    two = ReleaseManifest("n", "o/r", "w" * 64, dict(reversed(files.items()))).write(
        tmp_path / "two"
    )
    assert one.read_bytes() == two.read_bytes()
    assert list(json.loads(one.read_text())["files"]) == ["a", "b"]


@pytest.mark.parametrize(
    ("record", "data", "field", "command"),
    [
        (TrainingEvidence, {"seed": 0}, "kind", "rsi-hub train"),
        (EvalMeta, {"weights_sha256": "w"}, "suite", "rsi-hub eval RUN --suite SUITE"),
        (SynthProvenance, {"kind": "lensyn", "data_file": "d"}, "data_sha256", "rsi-hub synth"),
        (SweepManifest, {"recipe": "b1"}, "arms", "rsi-hub sweep"),
        (ReleaseManifest, {"name": "n", "repo_id": "r", "files": {}}, "weights_sha256",
         "rsi-hub release RUN"),
    ],
)  # fmt: skip
def test_missing_required_field_names_file_field_and_command(
    tmp_path: Path, record: type, data: dict, field: str, command: str
) -> None:
    path = tmp_path / record.FILE
    path.write_text(json.dumps(data))
    with pytest.raises(RunDirError) as info:
        record.read_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}: required field {field!r} is missing or null")
    assert command in message
    assert isinstance(info.value, ValueError) and isinstance(info.value, RsiHubError)


def test_null_required_field_is_missing_too(tmp_path: Path) -> None:
    path = tmp_path / "meta.json"
    path.write_text(json.dumps({"suite": None}))
    with pytest.raises(RunDirError, match="required field 'suite' is missing or null"):
        EvalMeta.read(tmp_path)


def test_sweep_arm_without_run_dir_is_named_by_index(tmp_path: Path) -> None:
    data = {"recipe": "b1", "arms": [{"name": "a", "run_dir": "runs/a"}, {"name": "b"}]}
    (tmp_path / "sweep.json").write_text(json.dumps(data))
    with pytest.raises(RunDirError, match=r"required field 'arms\[1\]\.run_dir' is missing"):
        SweepManifest.read(tmp_path)


def test_malformed_release_files_are_an_error_naming_the_field(tmp_path: Path) -> None:
    data = {"name": "n", "repo_id": "r", "weights_sha256": "w", "files": {"x": {"size": 1}}}
    (tmp_path / "release_manifest.json").write_text(json.dumps(data))
    with pytest.raises(RunDirError, match=r"field 'files' is malformed.*rsi-hub release RUN"):
        ReleaseManifest.read(tmp_path)


def test_newer_schema_is_refused_with_upgrade_advice(tmp_path: Path) -> None:
    (tmp_path / "training_evidence.json").write_text(json.dumps({"kind": "k", "schema_version": 2}))
    with pytest.raises(
        RunDirError, match="'schema_version' is 2, but this rsi-hub reads versions 0 to 1: upgrade"
    ):
        TrainingEvidence.read(tmp_path)


def test_missing_file_and_bad_json(tmp_path: Path) -> None:
    with pytest.raises(RunFileMissingError) as info:
        TrainingEvidence.read(tmp_path)
    assert isinstance(info.value, FileNotFoundError)
    assert str(info.value).startswith(f"{tmp_path / 'training_evidence.json'}: missing; regenerate")
    assert TrainingEvidence.read_if_any(tmp_path) is None
    (tmp_path / "training_evidence.json").write_text("{")
    with pytest.raises(RunDirError, match="not valid JSON"):
        TrainingEvidence.read_if_any(tmp_path)
    (tmp_path / "training_evidence.json").write_text("[1]")
    with pytest.raises(RunDirError, match="must hold a JSON object"):
        TrainingEvidence.read(tmp_path)


def test_typed_accessors_of_a_training_run() -> None:
    evidence = TrainingEvidence.from_json(
        {
            "kind": "rsi-hub training run",
            "status": "completed",
            "data": {"dataset_sha256": "d" * 64},
            "loss": {"first": 2.5, "last": 1.25},
            "slurm": {"job_id": "42", "state": "COMPLETED"},
        }
    )
    assert evidence.completed and evidence.dataset_sha256 == "d" * 64
    assert (evidence.first_loss, evidence.last_loss) == (2.5, 1.25)
    assert (evidence.slurm_job_id, evidence.slurm_state) == ("42", "COMPLETED")
    soup = TrainingEvidence(
        kind="weight soup", ingredients=[{"name": "a", "weight": 0.25}, {"name": "b", "weight": 1}]
    )
    assert soup.soup_weights == [("a", 0.25), ("b", 1.0)]
    bare = TrainingEvidence(kind="tiny")
    assert (bare.dataset_sha256, bare.first_loss, bare.slurm_job_id, bare.slurm_state) == (
        None, None, None, None,
    )  # fmt: skip
    assert bare.soup_weights == []


def test_sweep_arm_round_trip() -> None:
    arm = SweepArm("a", "runs/a", {"k": "1"}, {"jobs": {"train": "7"}})
    manifest = SweepManifest(recipe="b1", arms=[arm], grid={"k": ["1"]}, mode="local")
    data = json.loads(json.dumps(manifest.to_json()))
    assert data["arms"] == [
        {"name": "a", "run_dir": "runs/a", "point": {"k": "1"}, "jobs": {"train": "7"}}
    ]
    assert SweepManifest.from_json(data) == manifest


def test_write_json_atomic_replaces_whole_and_leaves_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "x.json"
    rundir.write_json_atomic(path, {"a": 1})
    rundir.write_json_atomic(path, {"a": 2, "t": (1, 2)})
    assert json.loads(path.read_text()) == {"a": 2, "t": [1, 2]}
    assert sorted(p.name for p in path.parent.iterdir()) == ["x.json"]

    class Unprintable:
        def __str__(self) -> str:
            raise RuntimeError("cannot serialise")

    with pytest.raises(RuntimeError, match="cannot serialise"):
        rundir.write_json_atomic(path, {"a": Unprintable()})
    # The failed write left the previous file intact and no temporary file behind.
    assert json.loads(path.read_text()) == {"a": 2, "t": [1, 2]}
    assert sorted(p.name for p in path.parent.iterdir()) == ["x.json"]


def test_library_versions_one_spelling() -> None:
    versions = rundir.library_versions()
    assert list(versions) == ["python", *rundir.LIBRARIES, "cuda"]
    assert versions["rsi-hub"] == rsi_hub.__version__
    assert versions["torch"] == torch.__version__
    assert versions["vllm"] is None or isinstance(versions["vllm"], str)
    assert all(key == key.lower() and "_" not in key for key in versions)


def test_weights_sha256_is_the_hashing_definition(tmp_path: Path) -> None:
    save_file({"w": torch.arange(4.0)}, tmp_path / "model.safetensors")
    assert rundir.weights_sha256(tmp_path) == hashing.weights_sha256(tmp_path)
    assert len(rundir.weights_sha256(tmp_path)) == 64


def test_path_helpers() -> None:
    run = Path("runs/x")
    assert rundir.evidence_path(run) == run / "training_evidence.json"
    assert rundir.eval_dir(run, "if818") == run / "eval" / "if818"
    assert rundir.meta_path(rundir.eval_dir(run, "if818")) == run / "eval" / "if818" / "meta.json"
    assert rundir.samples_path(run, "ev4") == run / "samples_ev4.jsonl"
    assert rundir.sample_task(run / "samples_ev4.jsonl") == "ev4"
    assert rundir.sweep_path("sweeps/s") == Path("sweeps/s/sweep.json")
    assert rundir.sweep_path("sweeps/s/sweep.json") == Path("sweeps/s/sweep.json")


def _imports(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
    return modules


def test_rundir_is_a_leaf() -> None:
    """It imports only errors, hashing and crashpoint of rsi_hub (all leaves), so every stage may use it."""
    for path in (PACKAGE / "rundir").glob("*.py"):
        ours = {m for m in _imports(path) if m.split(".")[0] == "rsi_hub"}
        allowed = ("rsi_hub.errors.", "rsi_hub.hashing", "rsi_hub.crashpoint", "rsi_hub.rundir.")
        assert [m for m in ours if not m.startswith(allowed)] == [], path


def test_tiny_evidence_is_a_typed_record_with_the_one_versions_record(tiny_run: Path) -> None:
    evidence = TrainingEvidence.read(tiny_run)
    assert evidence.to_json()["schema_version"] == rundir.SCHEMA_VERSION
    assert (evidence.seed, evidence.optimizer_steps, evidence.base_model) == (0, 0, None)
    assert evidence.libraries == rundir.library_versions()
    assert evidence.extra["model_type"] == "nemotron_h"
