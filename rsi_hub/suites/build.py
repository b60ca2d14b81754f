"""Building the suite files: IF-818 (planned), IF263 and IF-3k (drawn, de-duplicated), EV4, PREF.

The suites are generated in order (IF-818, IF263, IF-3k), each prompt checked against one
growing `HoldoutIndex` of every prompt kept so far: a draw that is an exact or near-duplicate
of an earlier prompt, in its own suite or an earlier one, is replaced by the next attempt. The
check types of a prompt are fixed before the attempts, so rejection never skews the mix.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tqdm import tqdm

from rsi_hub.errors import SuiteFileError
from rsi_hub.suites.ev4_data import ev4_rows
from rsi_hub.suites.files import MANIFEST, dumps_rows, file_name, manifest_bytes
from rsi_hub.suites.generator import Generated, GenerationError, make_prompt
from rsi_hub.suites.holdout import HoldoutIndex
from rsi_hub.suites.mixes import (
    IF3K_MIX,
    IF263_MIX,
    IF818_COUNTS,
    IF818_SIZE,
    IF818_STRUCTURAL,
    exact_plan,
    sample_types,
)
from rsi_hub.suites.pref_data import pref_demo_rows
from rsi_hub.suites.rng import Rng

# Part of every seed: changing it re-draws every suite (and needs `suites build --force`).
GENERATOR_VERSION = "rsi-hub-suites/1"
HOLDOUT_SUITES: tuple[str, ...] = ("if818", "if263", "if3k")
SUITE_SIZES: dict[str, int] = {"if818": IF818_SIZE, "if263": 263, "if3k": 3000}
MAX_ATTEMPTS = 200

Row = dict[str, Any]


def row_id(suite: str, position: int) -> str:
    """The id of a suite's row at 0-based `position`: 'if818-0001', 'if3k-3000', ..."""
    return f"{suite}-{position + 1:04d}"


def draw_unique(
    key: tuple[object, ...],
    group: str,
    types: tuple[str, ...],
    is_taken: Callable[[str], bool],
) -> Generated:
    """The first attempt at a prompt with these types whose text `is_taken` does not reject."""
    for attempt in range(MAX_ATTEMPTS):
        try:
            generated = make_prompt(Rng(GENERATOR_VERSION, *key, attempt), group, types)
        except GenerationError:
            continue
        if not is_taken(generated.prompt):
            return generated
    raise GenerationError(f"no unique feasible prompt for {key} with {types}")


def suite_types(suite: str) -> list[tuple[str, ...]]:
    """Each prompt's check types for a held-out suite, in row order."""
    if suite == "if818":
        return exact_plan(IF818_SIZE, IF818_COUNTS, IF818_STRUCTURAL, Rng(GENERATOR_VERSION, suite))
    mix = {"if263": IF263_MIX, "if3k": IF3K_MIX}[suite]
    return [
        sample_types(mix, Rng(GENERATOR_VERSION, suite, i, "types"))
        for i in range(SUITE_SIZES[suite])
    ]


def generate_holdout_suites(progress: bool = False) -> dict[str, list[Row]]:
    """Generate IF-818, IF263 and IF-3k; deterministic, so the committed files can be rebuilt."""
    index = HoldoutIndex()

    def is_taken(prompt: str) -> bool:
        return index.match(prompt) is not None

    suites: dict[str, list[Row]] = {}
    for suite in HOLDOUT_SUITES:
        rows: list[Row] = []
        plan = suite_types(suite)
        for i in tqdm(range(len(plan)), desc=f"generating {suite}", disable=not progress):
            generated = draw_unique((suite, i), suite, plan[i], is_taken)
            rid = row_id(suite, i)
            index.add(rid, generated.prompt)
            rows.append(
                {
                    "id": rid,
                    "prompt": generated.prompt,
                    "checks": generated.checks,
                    "category": generated.category,
                }
            )
        suites[suite] = rows
    return suites


def suite_files(progress: bool = False) -> dict[str, bytes]:
    """Every file of tasks/lm_eval/data, as bytes: the suites, EV4, the PREF demo, SHA256SUMS."""
    files = {
        file_name(name): dumps_rows(rows)
        for name, rows in generate_holdout_suites(progress=progress).items()
    }
    files[file_name("ev4")] = dumps_rows(ev4_rows())
    files[file_name("pref_demo")] = dumps_rows(pref_demo_rows())
    files[MANIFEST] = manifest_bytes(files)
    return files


def write_suite_files(
    out_dir: Path, force: bool = False, progress: bool = False
) -> list[tuple[str, str]]:
    """Build the files into `out_dir`; returns (file name, 'written' | 'unchanged' | 'replaced').

    Refuses, before writing anything, to replace an existing file whose bytes differ unless
    `force` is true: the committed suites are the evaluation's ground truth.
    """
    files = suite_files(progress=progress)
    differing = [
        name
        for name, data in files.items()
        if (out_dir / name).exists() and (out_dir / name).read_bytes() != data
    ]
    if differing and not force:
        raise SuiteFileError(
            f"{len(differing)} file(s) in {out_dir} differ from what this generator builds: "
            f"{', '.join(sorted(differing))}. Committed suites are never overwritten silently; "
            "pass --force to replace them (and commit the new files and SHA256SUMS together)."
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    report = []
    for name, data in sorted(files.items()):
        path = out_dir / name
        status = "unchanged"
        if not path.exists() or path.read_bytes() != data:
            status = "replaced" if path.exists() else "written"
            path.write_bytes(data)
        report.append((name, status))
    return report
