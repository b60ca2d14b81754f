"""The results layout under a run directory, written atomically and read back.

```
RUN/eval/<suite>/
  results.json           lm-eval's results (per-task metrics, configs, versions, n-samples)
  samples_<task>.jsonl   one line per document: lm-eval's sample log (doc_id, doc, arguments,
                         resps, filtered_resps, doc_hash, prompt_hash, per-document metrics)
  meta.json              what was scored and how: weights sha256, checker version, sandbox
                         backend that ran code_tests ("bwrap" or "fallback"), system
                         prompt id, generation settings, limit, backend, versions, timing
```
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi_hub import rundir
from rsi_hub.crashpoint import crash_point
from rsi_hub.errors import EvaluationError, EvaluationFileError
from rsi_hub.rundir import EVAL_DIR, META_FILE, RESULTS_FILE, EvalMeta, dumps
from rsi_hub.staging import fresh_staging_dir, swap_in

__all__ = ["EVAL_DIR", "META_FILE", "RESULTS_FILE", "SuiteRecord", "dumps", "suite_dir"]
suite_dir = rundir.eval_dir  # `RUN/eval/<suite>/`


def write_suite_dir(
    run: str | Path,
    suite: str,
    results: dict[str, Any],
    samples: dict[str, list[dict[str, Any]]],
    meta: EvalMeta,
) -> Path:
    """Write `RUN/eval/<suite>/` in a staging folder beside it, then swap it in.

    A crash leaves either the previous complete folder or the new complete folder, never a mix
    and never neither (see `rsi_hub.staging`).
    """
    target = suite_dir(run, suite)
    staging = fresh_staging_dir(target, "partial")
    try:
        for task, rows in samples.items():
            with rundir.samples_path(staging, task).open("w", encoding="utf-8") as out:
                for row in rows:
                    out.write(dumps(row, indent=None) + "\n")
            crash_point()
        rundir.results_path(staging).write_text(dumps(results) + "\n", encoding="utf-8")
        crash_point()
        rundir.meta_path(staging).write_text(dumps(meta.to_json()) + "\n", encoding="utf-8")
        crash_point()
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    swap_in(staging, target)
    return target


@dataclass(frozen=True)
class SuiteRecord:
    """One `RUN/eval/<suite>/` folder as read back."""

    folder: Path
    results: dict[str, Any]
    meta: EvalMeta

    def metrics(self, task: str) -> dict[str, Any]:
        """The metrics of one task (or group), without lm-eval's `,none` filter suffix."""
        table = self.results.get("results", {}).get(task)
        if table is None:
            path = rundir.results_path(self.folder)
            raise EvaluationError(f"{path}: no results for task {task!r}", path=path)
        return {key.split(",")[0]: value for key, value in table.items() if "," in key}

    def sample_files(self) -> list[Path]:
        """Every `samples_<task>.jsonl` of the folder, in name order."""
        return rundir.sample_files(self.folder)

    def samples(self, task: str | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """(task, sample) for every logged document, of one task or of all."""
        for path in self.sample_files():
            name = rundir.sample_task(path)
            if task is not None and name != task:
                continue
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    if line.strip():
                        yield name, json.loads(line)


def read_suite_dir(run: str | Path, suite: str) -> SuiteRecord:
    """Read `RUN/eval/<suite>/`.

    Raises:
        EvaluationFileError: the folder is missing; RunDirError / RunFileMissingError: one of
            its files is missing or malformed (run `rsi-hub eval` first).
    """
    folder = suite_dir(run, suite)
    if not folder.is_dir():
        raise EvaluationFileError(
            f"{folder} not found: run `rsi-hub eval {run} --suite {suite}` first.", path=folder
        )
    again = f"regenerate it: run `rsi-hub eval {run} --suite {suite}` again"
    results = rundir.read_json_object(rundir.results_path(folder), regenerate=again)
    return SuiteRecord(folder, results, EvalMeta.read(folder))


def has_suite_dir(run: str | Path, suite: str) -> bool:
    """True when `RUN/eval/<suite>/` holds a finished evaluation."""
    return rundir.meta_path(suite_dir(run, suite)).is_file()
