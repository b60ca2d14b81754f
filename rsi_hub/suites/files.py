"""Suite files on disk: `tasks/lm_eval/data/prompts_<suite>.jsonl` plus a SHA-256 manifest.

Row schema (one JSON object per line, keys in this order):

- `id`: a string, `<suite>-<NNNN>` numbered from 1 (`if818-0001`, `ev4-0082`). The generation
  pool is not a file; its prompts have integer ids (see `rsi_hub.suites.pool`).
- `prompt`: the user message, as the model sees it.
- `checks`: the non-empty list of checker constraints (`rsi_hub.checker`), all must pass.
- `category`: the writing task (`email`, `summary`, `json`, ...) or, for EV4, one of its 12
  ability categories.
- `reference` (EV4 only): a hand-written answer that passes the row's checks.

`SHA256SUMS` uses `sha256sum`'s format, so `sha256sum -c SHA256SUMS` works in that folder.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rsi_hub.checker import CheckError, validate_checks
from rsi_hub.errors import SuiteFileError
from rsi_hub.shipped import resource_path

MANIFEST = "SHA256SUMS"
PROMPT_SUITES: tuple[str, ...] = ("if818", "if263", "if3k", "ev4")
PREF_FILES: tuple[str, ...] = ("pref_demo",)
ROW_FIELDS: tuple[str, ...] = ("id", "prompt", "checks", "category")
OPTIONAL_FIELDS: tuple[str, ...] = ("reference",)


def data_dir() -> Path:
    """Where the suite files live: $RSI_HUB_SUITES_DIR, else the shipped tasks/lm_eval/data."""
    override = os.environ.get("RSI_HUB_SUITES_DIR")
    if override:
        return Path(override)
    return resource_path("lm_eval") / "data"


def file_name(name: str) -> str:
    """`prompts_<name>.jsonl`."""
    return f"prompts_{name}.jsonl"


def dumps_rows(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """Rows as JSON lines (UTF-8, one object per line, trailing newline)."""
    return "".join(json.dumps(dict(row), ensure_ascii=False) + "\n" for row in rows).encode()


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of bytes."""
    return hashlib.sha256(data).hexdigest()


def manifest_bytes(files: Mapping[str, bytes]) -> bytes:
    """A `sha256sum`-format manifest of the given files, sorted by name."""
    return "".join(f"{sha256_bytes(files[n])}  {n}\n" for n in sorted(files)).encode()


def read_manifest(folder: Path) -> dict[str, str]:
    """file name -> sha256 from `folder/SHA256SUMS` (empty if there is none)."""
    path = folder / MANIFEST
    if not path.exists():
        return {}
    out = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        digest, sep, name = line.partition("  ")
        if not sep or len(digest) != 64:
            raise SuiteFileError(f"{path}:{lineno}: not a `sha256sum` line: {line!r}")
        out[name.lstrip("*")] = digest
    return out


@dataclass
class Suite:
    """A loaded, validated suite: its rows in file order, and where they came from."""

    name: str
    path: Path
    sha256: str
    rows: list[dict[str, Any]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)


def resolve(name_or_path: str | os.PathLike[str]) -> tuple[str, Path]:
    """(suite name, file path) for a known suite name or a path to a suite file."""
    text = os.fspath(name_or_path)
    if text in PROMPT_SUITES:
        return text, data_dir() / file_name(text)
    if text in PREF_FILES:
        raise SuiteFileError(f"{text} holds preference pairs, not prompts: use load_pref({text!r})")
    path = Path(text)
    if not path.exists():
        known = ", ".join(PROMPT_SUITES)
        raise SuiteFileError(f"no suite named {text!r} (known: {known}) and no such file")
    stem = path.name.removesuffix(".jsonl")
    return stem.removeprefix("prompts_"), path


def load_suite(name_or_path: str | os.PathLike[str], verify: bool = True) -> Suite:
    """Load and validate a suite by name (`if818`, `if263`, `if3k`, `ev4`) or by path.

    Every row is validated (fields, types, unique ids, checks via the checker's
    `validate_checks`); a bad row raises `SuiteFileError` naming the line and the field. With
    `verify`, the file's SHA-256 must equal its entry in the manifest beside it (required for a
    named suite; for a path, checked when the manifest lists the file).
    """
    name, path = resolve(name_or_path)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise SuiteFileError(f"cannot read suite file {path}: {err}") from err
    digest = sha256_bytes(data)
    if verify:
        listed = read_manifest(path.parent).get(path.name)
        if listed is None and name in PROMPT_SUITES and path == data_dir() / file_name(name):
            raise SuiteFileError(
                f"{path.name} is not listed in {path.parent / MANIFEST}; "
                "rebuild with `rsi-hub suites build`"
            )
        if listed is not None and listed != digest:
            raise SuiteFileError(
                f"{path} does not match {MANIFEST}: expected sha256 {listed}, file has {digest}. "
                "Restore the committed file, or rebuild with `rsi-hub suites build --force`."
            )
    return Suite(name, path, digest, parse_rows(data, path))


def parse_rows(data: bytes, path: Path | str) -> list[dict[str, Any]]:
    """Validated rows of a suite file's bytes; errors carry `path:line: field 'x': ...`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SuiteFileError(f"{path}: not UTF-8 ({err})") from err
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        where = f"{path}:{lineno}"
        if not line.strip():
            raise SuiteFileError(f"{where}: empty line (one JSON object per line expected)")
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise SuiteFileError(
                f"{where}: not valid JSON ({err.msg}, column {err.colno})"
            ) from err
        if not isinstance(row, dict):
            raise SuiteFileError(f"{where}: expected a JSON object, got {type(row).__name__}")
        _validate_row(row, where)
        if row["id"] in seen:
            raise SuiteFileError(
                f"{where}: field 'id': {row['id']!r} already used on line {seen[row['id']]}"
            )
        seen[row["id"]] = lineno
        rows.append(row)
    if not rows:
        raise SuiteFileError(f"{path}: no rows")
    return rows


def _validate_row(row: dict[str, Any], where: str) -> None:
    for name in ROW_FIELDS:
        if name not in row:
            raise SuiteFileError(f"{where}: field '{name}': missing")
    for name in row:
        if name not in ROW_FIELDS + OPTIONAL_FIELDS:
            raise SuiteFileError(f"{where}: field '{name}': unknown field")
    for name in ("id", "prompt", "category", *(f for f in OPTIONAL_FIELDS if f in row)):
        if not isinstance(row[name], str) or not row[name].strip():
            raise SuiteFileError(f"{where}: field '{name}': expected a non-empty string")
    checks = row["checks"]
    if not isinstance(checks, list) or not checks:
        raise SuiteFileError(f"{where}: field 'checks': expected a non-empty list of checks")
    try:
        validate_checks(checks)
    except CheckError as err:
        raise SuiteFileError(f"{where}: field 'checks': {err}") from err
