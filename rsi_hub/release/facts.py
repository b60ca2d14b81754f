"""The facts of one release: `release/<name>/`, the data its model card is rendered from.

Layout of a facts folder (every file is checked on load; an error names the file and the fix):

- `release.yaml`: `name`, `repo_id`, `title`, `intro` (paragraphs), `hub_metadata` (the card's
  YAML front matter: base_model, license, datasets, tags ...).
- one YAML file per card section, rendered in this order when present: `serving.yaml`,
  `lineage.yaml`, `experiments.yaml`, `evaluation.yaml`, `failures.yaml`, `limitations.yaml`,
  `files.yaml`. Each has a `heading` and ordered `blocks`: `{text: ...}` (a paragraph),
  `{bullet: ..., system_prompt: true|false}` (a list item; `system_prompt` quotes k0 under it,
  from `templates/system_prompt.txt`) or `{table: NAME.tsv}` (a tab-separated table beside it).
  A section may name `measured` rows: cells of one of its tables that the staged run's own
  evaluation results fill (`{table, row, columns: {column: suite}}`).
- `evidence.yaml`: `required` fields of the run's `training_evidence.json` and the `expected`
  values the card states for some of them (a string ending in `…` is a prefix).
- `LICENSE`: the licence file shipped with the weights, verbatim.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rsi_hub.errors import ReleaseError

SECTION_FILES = (
    "serving",
    "lineage",
    "experiments",
    "evaluation",
    "failures",
    "limitations",
    "files",
)
RELEASE_FILE = "release.yaml"
EVIDENCE_FILE = "evidence.yaml"
LICENSE_FILE = "LICENSE"
SUITES = ("if818", "if263", "if3k", "ev4", "pref", "mmlu")
REQUIRED_HUB_METADATA = ("library_name", "pipeline_tag", "license")


@dataclass(frozen=True)
class Table:
    """A tab-separated table of a facts folder: header and rows of cell strings."""

    file: str
    header: list[str]
    rows: list[list[str]]

    def row_index(self, first_cell: str) -> int | None:
        """The index of the row whose first cell is `first_cell`, or None."""
        return next((i for i, row in enumerate(self.rows) if row[0] == first_cell), None)


@dataclass(frozen=True)
class MeasuredRow:
    """Cells of `table` in the row `row` that the run's evaluation results fill, column -> suite."""

    table: str
    row: str
    columns: dict[str, str]


@dataclass(frozen=True)
class Block:
    """One block of a card section: a paragraph, a list item or a table."""

    kind: str  # "text", "bullet" or "table"
    text: str = ""
    table: Table | None = None
    system_prompt: bool = False


@dataclass(frozen=True)
class Section:
    """One section of the card, from `<key>.yaml`."""

    key: str
    heading: str
    blocks: list[Block]
    measured: list[MeasuredRow] = field(default_factory=list)


@dataclass(frozen=True)
class Facts:
    """Everything a release's card and checks need, loaded from `release/<name>/`."""

    folder: Path
    name: str
    repo_id: str
    title: str
    intro: list[str]
    hub_metadata: dict[str, Any]
    sections: list[Section]
    evidence_required: list[str]
    evidence_expected: dict[str, Any]
    license_text: str

    @property
    def tables(self) -> dict[str, Table]:
        """Every table of every section, by file name."""
        return {
            block.table.file: block.table
            for section in self.sections
            for block in section.blocks
            if block.table is not None
        }


def facts_root() -> Path:
    """The installed `release/` folder (the checkout's own folder in an editable install)."""
    from rsi_hub.shipped import resource_path

    return resource_path("release")


def check_release_name(name: str) -> str:
    """`name` when it is a plain folder name under `release/` (it also names the staging folder).

    Raises:
        ReleaseError: empty, `.`/`..`, hidden, or holding a path separator.
    """
    if not name or name.startswith(".") or Path(name).name != name or "\\" in name:
        raise ReleaseError(
            f"--name {name!r}: not a plain folder name under release/ (no '/', '\\', '..' or "
            "leading '.'); pass the name of a facts folder, e.g. --name tiny."
        )
    return name


def check_repo_id(repo_id: str, where: str) -> str:
    """`repo_id` when huggingface_hub accepts it as a repository id; `where` names its source.

    Raises:
        ReleaseError: not `NAME` or `ORG/NAME` of letters, digits, `-`, `_`, `.` (no `..`).
    """
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError as err:
        raise ReleaseError(
            f"{where} {repo_id!r}: not a Hub repository id ({' '.join(str(err).split())}); "
            "give ORG/NAME of letters, digits, '-', '_' and '.'."
        ) from err
    return repo_id


def _load_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ReleaseError(f"{path}: missing; every release folder needs it (see release/tiny/).")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ReleaseError(f"{path}: not valid YAML ({err}); fix the file.") from err
    if not isinstance(data, dict):
        raise ReleaseError(f"{path}: must hold a YAML mapping; fix the file.")
    return data


def _need(data: dict[str, Any], key: str, kind: type, path: Path) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or value in ("", [], {}):
        what = {str: "text", list: "list", dict: "mapping"}.get(kind, kind.__name__)
        raise ReleaseError(f"{path}: field {key!r} is missing or not a non-empty {what}; add it.")
    return value


def load_table(path: Path) -> Table:
    """Read a tab-separated table; every row must have as many cells as the header."""
    if not path.is_file():
        raise ReleaseError(f"{path}: missing; add the table or remove the block that names it.")
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if len(lines) < 2:
        raise ReleaseError(f"{path}: needs a header line and at least one row.")
    header, *rows = (line.split("\t") for line in lines)
    for number, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise ReleaseError(
                f"{path}: line {number} has {len(row)} tab-separated cells, the header has "
                f"{len(header)}; separate cells with one tab each."
            )
    return Table(file=path.name, header=header, rows=rows)


def _load_block(raw: Any, folder: Path, path: Path) -> Block:
    if not isinstance(raw, dict):
        raise ReleaseError(f"{path}: every block must be a mapping, got {raw!r}.")
    if "table" in raw:
        return Block(kind="table", table=load_table(folder / str(raw["table"])))
    for kind in ("text", "bullet"):
        if isinstance(raw.get(kind), str):
            return Block(kind=kind, text=raw[kind], system_prompt=bool(raw.get("system_prompt")))
    raise ReleaseError(f"{path}: block {raw!r} has none of text, bullet or table; fix it.")


def _load_measured(raw: Any, tables: dict[str, Table], path: Path) -> list[MeasuredRow]:
    measured = []
    for entry in raw or []:
        table = tables.get(str(entry.get("table")))
        if table is None:
            raise ReleaseError(
                f"{path}: measured table {entry.get('table')!r} is not a block here."
            )
        row = str(entry.get("row"))
        if table.row_index(row) is None:
            raise ReleaseError(f"{path}: measured row {row!r} is not a row of {table.file}.")
        columns = {str(k): str(v) for k, v in (entry.get("columns") or {}).items()}
        for column, suite in columns.items():
            if column not in table.header:
                raise ReleaseError(f"{path}: measured column {column!r} is not in {table.file}.")
            if suite not in SUITES:
                raise ReleaseError(f"{path}: suite {suite!r} is not one of {', '.join(SUITES)}.")
        measured.append(MeasuredRow(table=table.file, row=row, columns=columns))
    return measured


def _load_section(key: str, folder: Path) -> Section:
    path = folder / f"{key}.yaml"
    data = _load_yaml(path)
    heading = _need(data, "heading", str, path)
    blocks = [_load_block(raw, folder, path) for raw in _need(data, "blocks", list, path)]
    tables = {b.table.file: b.table for b in blocks if b.table is not None}
    return Section(key, heading, blocks, _load_measured(data.get("measured"), tables, path))


def load_facts(name: str, root: str | Path | None = None) -> Facts:
    """Load and check the facts folder `release/<name>/` (or `<root>/<name>/`).

    Raises:
        ReleaseError: `name` is not a plain folder name, or the folder or one of its files is
            missing or malformed (names the file).
    """
    folder = Path(root) if root is not None else facts_root()
    folder = folder / check_release_name(name)
    if not folder.is_dir():
        raise ReleaseError(
            f"{folder}: no facts folder for release {name!r}; create it (copy release/tiny/ and "
            "edit it) or pass --name with an existing one."
        )
    release_path = folder / RELEASE_FILE
    release = _load_yaml(release_path)
    metadata = _need(release, "hub_metadata", dict, release_path)
    for key in REQUIRED_HUB_METADATA:
        _need(metadata, key, str, release_path)
    if release.get("name") != name:
        raise ReleaseError(f"{release_path}: field 'name' must be {name!r} (the folder's name).")
    evidence_path = folder / EVIDENCE_FILE
    evidence = _load_yaml(evidence_path)
    license_path = folder / LICENSE_FILE
    if not license_path.is_file() or not license_path.read_text(encoding="utf-8").strip():
        raise ReleaseError(f"{license_path}: missing or empty; add the licence text to ship.")
    return Facts(
        folder=folder,
        name=name,
        repo_id=check_repo_id(
            _need(release, "repo_id", str, release_path), f"{release_path}: field repo_id"
        ),
        title=_need(release, "title", str, release_path),
        intro=list(_need(release, "intro", list, release_path)),
        hub_metadata=dict(metadata),
        sections=[
            _load_section(k, folder) for k in SECTION_FILES if (folder / f"{k}.yaml").exists()
        ],
        evidence_required=[str(f) for f in evidence.get("required") or []],
        evidence_expected=dict(evidence.get("expected") or {}),
        license_text=license_path.read_text(encoding="utf-8"),
    )
