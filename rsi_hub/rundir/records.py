"""Typed records of the run-directory files, with `to_json` / `from_json` and `read` / `write`.

Every record carries `schema_version` (`SCHEMA_VERSION`). Files written before it existed
(version 0: no `schema_version` key) hold the same fields and are read as they are.
A file from a newer rsi-hub (a higher version) is refused with a message saying to upgrade.

Unknown keys are **preserved**, deliberately: a record's typed fields are the ones rsi-hub code
reads, and the rest (method-specific sections such as `precision`, `reward` or `tensors`, or a
field a newer writer added) is kept in `extra` and written back unchanged, so reading and
rewriting a file (`rsi-hub train finalize`) never drops information. Every typed field is
always written (`null` when unknown). A required field that is missing or null is an error
naming the file, the field and the command that regenerates the file. Values are not coerced:
a typed field holds what the file holds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self

from rsi_hub.errors import RunDirError
from rsi_hub.rundir import names
from rsi_hub.rundir.jsonfile import read_json_object, write_json_atomic

SCHEMA_VERSION = 1
_RESERVED = ("schema_version", "extra")


class _Record:
    """Shared JSON mapping of the records: typed fields + `schema_version` + `extra`."""

    FILE: ClassVar[str]
    REQUIRED: ClassVar[tuple[str, ...]]
    REGENERATE: ClassVar[str]
    schema_version: int
    extra: dict[str, Any]

    @classmethod
    def _typed_fields(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls) if f.name not in _RESERVED]  # type: ignore[arg-type]

    def to_json(self) -> dict[str, Any]:
        """The JSON object of the file: `schema_version`, every typed field, then the extras."""
        data: dict[str, Any] = {"schema_version": self.schema_version}
        data.update({name: getattr(self, name) for name in self._typed_fields()})
        data.update({k: v for k, v in self.extra.items() if k not in data})
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], *, source: str | Path = "<memory>") -> Self:
        """Build the record from a file's JSON object.

        Args:
            data: the parsed JSON object.
            source: the file it came from, named in errors.

        Raises:
            RunDirError: not an object, a newer schema, or a required field missing or null.
        """
        fix = f"regenerate it: {cls.REGENERATE}"
        if not isinstance(data, dict):
            raise RunDirError(f"{source}: must hold a JSON object; {fix}.")
        version = data.get("schema_version", 0)
        if not isinstance(version, int) or not 0 <= version <= SCHEMA_VERSION:
            raise RunDirError(
                f"{source}: field 'schema_version' is {version!r}, but this rsi-hub reads "
                f"versions 0 to {SCHEMA_VERSION}: upgrade rsi-hub, or {fix}."
            )
        for name in cls.REQUIRED:
            if data.get(name) is None:
                raise RunDirError(f"{source}: required field {name!r} is missing or null; {fix}.")
        typed = cls._typed_fields()
        extra = {k: v for k, v in data.items() if k not in typed and k not in _RESERVED}
        return cls(  # type: ignore[call-arg]
            **{k: data[k] for k in typed if k in data},
            extra=extra,
            schema_version=SCHEMA_VERSION,
        )

    @classmethod
    def read_file(cls, path: str | Path) -> Self:
        """Read the record from a file.

        Raises:
            RunFileMissingError: the file is missing.
            RunDirError: the file is not valid JSON or breaks the schema (see `from_json`).
        """
        regenerate = f"regenerate it: {cls.REGENERATE}"
        return cls.from_json(read_json_object(path, regenerate=regenerate), source=path)

    def write_file(self, path: str | Path) -> Path:
        """Write the record to `path` atomically; return the path."""
        return write_json_atomic(path, self.to_json())


@dataclass
class TrainingEvidence(_Record):
    """`RUN/training_evidence.json`: what made a run's weights (card section 7).

    Written by `rsi-hub train` (kind `rsi-hub training run`), `rsi-hub tiny` and `rsi-hub soup`
    (kind `weight soup`). Method-specific sections (`precision`, `reward`, `rewards`, `tensors`,
    ...) live in `extra`.
    """

    FILE: ClassVar[str] = names.EVIDENCE_FILE
    REQUIRED: ClassVar[tuple[str, ...]] = ("kind",)
    REGENERATE: ClassVar[str] = (
        "re-run the command that made the run (`rsi-hub train`, `rsi-hub tiny` or `rsi-hub soup`)"
    )

    kind: str
    status: str | None = None
    run: str | None = None
    method: str | None = None
    base_model: dict[str, Any] | None = None
    optimizer_steps: int | None = None
    seed: int | None = None
    weights_sha256: str | None = None
    slurm: dict[str, Any] | None = None
    data: dict[str, Any] | None = None
    hyperparameters: dict[str, Any] | None = None
    recipe: dict[str, Any] | None = None
    loss: dict[str, Any] | None = None
    attempts: list[dict[str, Any]] | None = None
    ingredients: list[dict[str, Any]] | None = None
    libraries: dict[str, str | None] | None = None
    start_time: str | None = None
    end_time: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    @property
    def completed(self) -> bool:
        """True once training finished and the weights in the run are final."""
        return self.status == "completed"

    @property
    def dataset_sha256(self) -> str | None:
        """The sha256 of the prepared training data (`data.dataset_sha256`), if recorded."""
        return (self.data or {}).get("dataset_sha256")

    @property
    def first_loss(self) -> float | None:
        """The first logged training loss, if recorded."""
        return (self.loss or {}).get("first")

    @property
    def last_loss(self) -> float | None:
        """The last logged training loss, if recorded."""
        return (self.loss or {}).get("last")

    @property
    def soup_weights(self) -> list[tuple[str, float]]:
        """(ingredient name, weight) of a weight soup, in order; empty for other runs."""
        return [(str(i["name"]), float(i["weight"])) for i in self.ingredients or []]

    @property
    def slurm_job_id(self) -> str | None:
        """The Slurm job id the run was launched under, or None outside Slurm."""
        return (self.slurm or {}).get("job_id")

    @property
    def slurm_state(self) -> str | None:
        """The job's final Slurm state (`rsi-hub train finalize`), if recorded."""
        return (self.slurm or {}).get("state")

    @classmethod
    def read(cls, run: str | Path) -> Self:
        """Read `RUN/training_evidence.json` (raises if it is missing; see `read_file`)."""
        return cls.read_file(names.evidence_path(run))

    @classmethod
    def read_if_any(cls, run: str | Path) -> Self | None:
        """The run's evidence, or None when the run has none yet (a fresh or foreign folder)."""
        path = names.evidence_path(run)
        return cls.read_file(path) if path.is_file() else None

    def write(self, run: str | Path) -> Path:
        """Write `RUN/training_evidence.json` atomically; return its path."""
        return self.write_file(names.evidence_path(run))


@dataclass
class EvalMeta(_Record):
    """`RUN/eval/<suite>/meta.json`: what was scored and how.

    `weights_sha256` binds the results to the weights they scored; `served_configuration` is
    false when the prompt or generation settings differ from the served ones.
    """

    FILE: ClassVar[str] = names.META_FILE
    REQUIRED: ClassVar[tuple[str, ...]] = ("suite",)
    REGENERATE: ClassVar[str] = "run `rsi-hub eval RUN --suite SUITE` again"

    suite: str
    tasks: list[str] | None = None
    weights_sha256: str | None = None
    checker_version: str | None = None
    sandbox_backend: str | None = None  # what isolated code_tests: "bwrap", "fallback" or "none"
    system_prompt_id: str | None = None
    system_prompt_sha256: str | None = None
    generation: dict[str, Any] | None = None
    served_configuration: bool | None = None
    limit: int | None = None
    n_samples: dict[str, int] | None = None
    backend: str | None = None
    versions: dict[str, str | None] | None = None
    finished_at: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    @classmethod
    def read(cls, folder: str | Path) -> Self:
        """Read the `meta.json` of an eval folder (`eval_dir(run, suite)`)."""
        return cls.read_file(names.meta_path(folder))

    def write(self, folder: str | Path) -> Path:
        """Write the `meta.json` of an eval folder atomically; return its path."""
        return self.write_file(names.meta_path(folder))


@dataclass
class SynthProvenance(_Record):
    """`OUT/provenance.json` of a finished synthesis run: what made the data and what it holds."""

    FILE: ClassVar[str] = names.PROVENANCE_FILE
    REQUIRED: ClassVar[tuple[str, ...]] = ("kind", "data_file", "data_sha256")
    REGENERATE: ClassVar[str] = "re-run `rsi-hub synth` with the same --out (it resumes)"

    kind: str
    data_file: str
    data_sha256: str
    created: str | None = None
    model: str | None = None
    weights_sha256: str | None = None
    backend: str | None = None
    sampling: dict[str, Any] | None = None
    k: int | None = None
    scaffold_sha256: str | None = None
    system_prompt_sha256: str | None = None
    checker_version: str | None = None
    prompt_source: str | None = None
    check_types: list[str] | None = None
    prompt_ids_sha256: str | None = None
    prompt_ids: list[Any] | None = None
    rows_kept: int | None = None
    rows_generated: int | None = None
    stats: dict[str, Any] | None = None
    audit: dict[str, Any] | None = None
    versions: dict[str, str | None] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    @property
    def audit_passed(self) -> bool:
        """True when the holdout audit found no overlap (false when it failed or is missing)."""
        return bool((self.audit or {}).get("passed"))

    @property
    def prompts_sampled(self) -> int | None:
        """Prompts that were sampled (`stats.prompts_sampled`), if recorded."""
        return (self.stats or {}).get("prompts_sampled")

    @property
    def prompts_with_a_pass(self) -> int | None:
        """Prompts with at least one kept sample (`stats.prompts_with_a_pass`), if recorded."""
        return (self.stats or {}).get("prompts_with_a_pass")

    @property
    def malformed(self) -> int:
        """Generations that could not be judged (all reasons together)."""
        return sum(((self.stats or {}).get("malformed") or {}).values())

    @classmethod
    def read(cls, out_dir: str | Path) -> Self:
        """Read `OUT/provenance.json`."""
        return cls.read_file(names.provenance_path(out_dir))

    def write(self, out_dir: str | Path) -> Path:
        """Write `OUT/provenance.json` atomically; return its path."""
        return self.write_file(names.provenance_path(out_dir))


@dataclass
class SweepArm:
    """One arm of a sweep: its name, grid point, overrides, run directory and job ids.

    Keys other than these are kept in `extra`, like a record's.
    """

    name: str
    run_dir: str
    point: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The arm's JSON object."""
        data = {"name": self.name, "run_dir": self.run_dir, "point": self.point}
        return {**data, **{k: v for k, v in self.extra.items() if k not in data}}

    @classmethod
    def from_json(cls, data: Any, *, source: str | Path, index: int) -> SweepArm:
        """Build an arm from the `arms[index]` object of `source`.

        Raises:
            RunDirError: not an object, or no `name` / `run_dir`.
        """
        for key in ("name", "run_dir"):
            if not isinstance(data, dict) or data.get(key) is None:
                raise RunDirError(
                    f"{source}: required field 'arms[{index}].{key}' is missing or null; "
                    f"regenerate it: {SweepManifest.REGENERATE}."
                )
        rest = {k: v for k, v in data.items() if k not in ("name", "run_dir", "point")}
        return cls(str(data["name"]), str(data["run_dir"]), dict(data.get("point") or {}), rest)


@dataclass
class SweepManifest(_Record):
    """`SWEEP_DIR/sweep.json`: the recipe, grid, mode and every arm of a sweep."""

    FILE: ClassVar[str] = names.SWEEP_FILE
    REQUIRED: ClassVar[tuple[str, ...]] = ("recipe", "arms")
    REGENERATE: ClassVar[str] = "run the same `rsi-hub sweep` command again (finished arms skip)"

    recipe: str
    arms: list[SweepArm]
    grid: dict[str, list[str]] = field(default_factory=dict)
    mode: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        """The JSON object of `sweep.json`."""
        data = super().to_json()
        data["arms"] = [arm.to_json() for arm in self.arms]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], *, source: str | Path = "<memory>") -> Self:
        """Build the manifest from `sweep.json`'s object (see `_Record.from_json`)."""
        record = super().from_json(data, source=source)
        if not isinstance(record.arms, list):
            raise RunDirError(
                f"{source}: field 'arms' must be a list; regenerate it: {cls.REGENERATE}."
            )
        record.arms = [
            arm if isinstance(arm, SweepArm) else SweepArm.from_json(arm, source=source, index=i)
            for i, arm in enumerate(record.arms)
        ]
        return record

    @property
    def points(self) -> dict[str, dict[str, Any]]:
        """Each arm's grid point (key -> value), by arm name."""
        return {arm.name: arm.point for arm in self.arms}

    @classmethod
    def read(cls, sweep: str | Path) -> Self:
        """Read a `sweep.json`, given the file or its sweep folder."""
        return cls.read_file(names.sweep_path(sweep))

    def write(self, sweep_dir: str | Path) -> Path:
        """Write `SWEEP_DIR/sweep.json` atomically; return its path."""
        return self.write_file(names.sweep_path(sweep_dir))


@dataclass(frozen=True)
class FileEntry:
    """One file of a release: size in bytes and sha256."""

    size: int
    sha256: str


@dataclass
class ReleaseManifest(_Record):
    """`release_manifest.json`: size and sha256 of every file of a staged release.

    It holds no timestamps: staging the same run twice gives the same bytes. Version-0 files
    spelled the schema version `version`; it is read as `schema_version`.
    """

    FILE: ClassVar[str] = names.RELEASE_MANIFEST_FILE
    REQUIRED: ClassVar[tuple[str, ...]] = ("name", "repo_id", "weights_sha256", "files")
    REGENERATE: ClassVar[str] = "stage the release again with `rsi-hub release RUN`"

    name: str
    repo_id: str
    weights_sha256: str
    files: dict[str, FileEntry]
    extra: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    @property
    def total_bytes(self) -> int:
        """The size of all listed files together."""
        return sum(entry.size for entry in self.files.values())

    def to_json(self) -> dict[str, Any]:
        """The manifest's object, files sorted by path (equal manifests are equal bytes)."""
        data = super().to_json()
        data["files"] = {
            path: {"size": entry.size, "sha256": entry.sha256}
            for path, entry in sorted(self.files.items())
        }
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], *, source: str | Path = "<memory>") -> Self:
        """Build the manifest from its file's object (see `_Record.from_json`)."""
        if isinstance(data, dict) and "version" in data and "schema_version" not in data:
            data = {k: v for k, v in data.items() if k != "version"}  # version 0's spelling
        record = super().from_json(data, source=source)
        try:
            record.files = {
                str(rel): entry
                if isinstance(entry, FileEntry)
                else FileEntry(size=int(entry["size"]), sha256=str(entry["sha256"]))
                for rel, entry in dict(record.files).items()
            }
        except (KeyError, TypeError, ValueError) as err:
            raise RunDirError(
                f"{source}: field 'files' is malformed ({err!r}); regenerate it: {cls.REGENERATE}."
            ) from err
        return record

    @classmethod
    def read(cls, folder: str | Path) -> Self:
        """Read the `release_manifest.json` of a staged release folder."""
        return cls.read_file(names.release_manifest_path(folder))

    def write(self, folder: str | Path) -> Path:
        """Write `release_manifest.json` into `folder` atomically; return its path."""
        return self.write_file(names.release_manifest_path(folder))


@dataclass
class ReplicateLedger(_Record):
    """`OUT/replicate.json`: each finished stage of `rsi-hub replicate` and what it wrote.

    `stages` maps a stage name to `{fingerprint, outputs: {path relative to OUT: sha256},
    digest, wall_s, summary}`. A re-run skips a stage only when its fingerprint (its settings and
    its inputs' digests) matches and every output file still has the recorded sha256.
    """

    FILE: ClassVar[str] = names.REPLICATE_LEDGER_FILE
    REQUIRED: ClassVar[tuple[str, ...]] = ("stages",)
    REGENERATE: ClassVar[str] = "delete it and re-run `rsi-hub replicate` (stages are redone)"

    stages: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    @classmethod
    def read_if_any(cls, out_dir: str | Path) -> Self | None:
        """Read `OUT/replicate.json`, or None when there is none yet."""
        path = names.replicate_ledger_path(out_dir)
        return cls.read_file(path) if path.is_file() else None

    def write(self, out_dir: str | Path) -> Path:
        """Write `OUT/replicate.json` atomically; return its path."""
        return self.write_file(names.replicate_ledger_path(out_dir))


@dataclass
class ReplicationReport(_Record):
    """`RUN/replication.json`: the replication a released run won, as its card states it.

    `rounds`: one entry per model (init, round 0, round 1) with its weights sha256, steps and
    scores; `comparisons`: `rsi-hub compare`'s verdicts; `failures`: per round, check type ->
    [passing, carrying]; `power`: what IF-818 and IF-3k can detect; `guards`: the guards file's
    thresholds and reasons.
    """

    FILE: ClassVar[str] = names.REPLICATION_REPORT_FILE
    REQUIRED: ClassVar[tuple[str, ...]] = ("winner", "rounds")
    REGENERATE: ClassVar[str] = "re-run `rsi-hub replicate` with the same --out"

    winner: str
    rounds: list[dict[str, Any]]
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    failures: dict[str, Any] = field(default_factory=dict)
    power: list[str] = field(default_factory=list)
    guards: list[dict[str, Any]] = field(default_factory=list)
    protocol: str | None = None
    checker_version: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    @classmethod
    def read_if_any(cls, run: str | Path) -> Self | None:
        """Read `RUN/replication.json`, or None when the run was not made by a replication."""
        path = names.replication_report_path(run)
        return cls.read_file(path) if path.is_file() else None

    def write(self, run: str | Path) -> Path:
        """Write `RUN/replication.json` atomically; return its path."""
        return self.write_file(names.replication_report_path(run))
