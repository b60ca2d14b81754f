"""The results layout under a run directory, written atomically and read back.

```
RUN/eval/<suite>/
  results.json           lm-eval's results (per-task metrics, configs, versions, n-samples)
  samples_<task>.jsonl   one line per document: lm-eval's sample log (doc_id, doc, arguments,
                         resps, filtered_resps, doc_hash, prompt_hash, per-document metrics)
  meta.json              what was scored and how: weights sha256, checker version, system
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

from rsi_hub.crashpoint import crash_point
from rsi_hub.errors import RsiHubError
from rsi_hub.staging import fresh_staging_dir, swap_in

EVAL_DIR = "eval"
RESULTS_FILE = "results.json"
META_FILE = "meta.json"
SAMPLES_PREFIX = "samples_"


def suite_dir(run: str | Path, suite: str) -> Path:
    """`RUN/eval/<suite>/`."""
    return Path(run) / EVAL_DIR / suite


def _default(value: Any) -> Any:
    # lm-eval's configs hold functions and numpy numbers; keep them readable, never crash.
    try:
        import numpy as np

        if isinstance(value, np.generic):
            return value.item()
    except ImportError:  # pragma: no cover - numpy ships with torch
        pass
    if isinstance(value, set | tuple):
        return list(value)
    return str(value)


def dumps(data: Any, *, indent: int | None = 2) -> str:
    """JSON text of lm-eval output (functions and numpy values made serialisable)."""
    return json.dumps(data, indent=indent, ensure_ascii=False, default=_default)


def write_suite_dir(
    run: str | Path,
    suite: str,
    results: dict[str, Any],
    samples: dict[str, list[dict[str, Any]]],
    meta: dict[str, Any],
) -> Path:
    """Write `RUN/eval/<suite>/` in a staging folder beside it, then swap it in.

    A crash leaves either the previous complete folder or the new complete folder, never a mix
    and never neither (see `rsi_hub.staging`).
    """
    target = suite_dir(run, suite)
    staging = fresh_staging_dir(target, "partial")
    try:
        for task, rows in samples.items():
            with (staging / f"{SAMPLES_PREFIX}{task}.jsonl").open("w", encoding="utf-8") as out:
                for row in rows:
                    out.write(dumps(row, indent=None) + "\n")
            crash_point()
        (staging / RESULTS_FILE).write_text(dumps(results) + "\n", encoding="utf-8")
        crash_point()
        (staging / META_FILE).write_text(dumps(meta) + "\n", encoding="utf-8")
        crash_point()
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    swap_in(staging, target)
    return target


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as err:
        raise RsiHubError(f"{path} is missing") from err
    except json.JSONDecodeError as err:
        raise RsiHubError(f"{path}: not valid JSON ({err})") from err


@dataclass(frozen=True)
class SuiteRecord:
    """One `RUN/eval/<suite>/` folder as read back."""

    folder: Path
    results: dict[str, Any]
    meta: dict[str, Any]

    def metrics(self, task: str) -> dict[str, Any]:
        """The metrics of one task (or group), without lm-eval's `,none` filter suffix."""
        table = self.results.get("results", {}).get(task)
        if table is None:
            raise RsiHubError(f"{self.folder / RESULTS_FILE}: no results for task {task!r}")
        return {key.split(",")[0]: value for key, value in table.items() if "," in key}

    def sample_files(self) -> list[Path]:
        return sorted(self.folder.glob(f"{SAMPLES_PREFIX}*.jsonl"))

    def samples(self, task: str | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """(task, sample) for every logged document, of one task or of all."""
        for path in self.sample_files():
            name = path.stem[len(SAMPLES_PREFIX) :]
            if task is not None and name != task:
                continue
            with path.open(encoding="utf-8") as handle:
                for line in handle:
                    if line.strip():
                        yield name, json.loads(line)


def read_suite_dir(run: str | Path, suite: str) -> SuiteRecord:
    """Read `RUN/eval/<suite>/`.

    Raises:
        RsiHubError: the folder or one of its files is missing (run `rsi-hub eval` first).
    """
    folder = suite_dir(run, suite)
    if not folder.is_dir():
        raise RsiHubError(f"{folder} not found: run `rsi-hub eval {run} --suite {suite}` first.")
    return SuiteRecord(folder, _read_json(folder / RESULTS_FILE), _read_json(folder / META_FILE))


def has_suite_dir(run: str | Path, suite: str) -> bool:
    """True when `RUN/eval/<suite>/` holds a finished evaluation."""
    return (suite_dir(run, suite) / META_FILE).is_file()
