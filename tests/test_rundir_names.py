"""Only `rsi_hub.rundir` spells the file names of the run-directory contract.

A module that builds `run / "training_evidence.json"` itself bypasses the typed record (and its
schema check); prose (docstrings, help texts) may still mention a file by name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import rsi_hub
from rsi_hub.rundir import RECORD_FILES

PACKAGE = Path(rsi_hub.__file__).parent


def spelled_file_names(source: str) -> list[tuple[int, str]]:
    """(line, name) of every string constant that is a record file name or ends in `/name`.

    f-string parts are string constants too, so `f"{run}/meta.json"` is caught.
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            for name in RECORD_FILES:
                if node.value == name or node.value.endswith(f"/{name}"):
                    found.append((node.lineno, name))
    return sorted(found)


def test_only_rundir_names_run_directory_files() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] != "rundir"
        for line, name in spelled_file_names(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "use the names and path helpers of rsi_hub.rundir"


def test_the_scan_sees_code_but_not_prose() -> None:
    source = (
        '"""Mentions training_evidence.json in prose."""\n'
        'HELP = "writes meta.json and results.json"\n'
        'P = run / "meta.json"\n'
        'Q = f"{run}/sweep.json"\n'
        'R = "release_manifest.json"\n'
    )
    assert spelled_file_names(source) == [
        (3, "meta.json"), (4, "sweep.json"), (5, "release_manifest.json"),
    ]  # fmt: skip
