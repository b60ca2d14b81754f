"""Streaming, resumable output of a synthesis run.

A run folder holds:

- `run.json`: the settings the run was started with; a resume must match them.
- `data.jsonl`: kept rows, appended as they are found (the data set).
- `ledger.jsonl`: one line per judged sample (prompt id, sample index, status, check results).
- `provenance.json`: written when the run completes.

Crash safety: the ledger is what a resume trusts ("this sample is done"), so no ledger line may
reach the disk before the data row it vouches for. The two files are buffered separately, and
the ledger grows faster (every sample, kept or not) so it would reach the disk first: ledger
lines are therefore held in memory until `flush`, which writes and fsyncs the batch's data rows,
and only then writes and fsyncs its ledger lines. On resume a torn last line (the process died
mid-write) is cut off, and a data row whose ledger line is missing gets its ledger line rebuilt
by re-judging the stored answer (the checker is deterministic), never a second row. So an
interrupted run resumes with no sample counted twice and no kept row lost.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rsi_hub.crashpoint import crash_point
from rsi_hub.errors import SynthFileError
from rsi_hub.rundir import PROVENANCE_FILE, write_json_atomic
from rsi_hub.rundir import SYNTH_RUN_FILE as RUN_FILE

__all__ = ["PROVENANCE_FILE", "RUN_FILE", "RunStore", "read_jsonl", "write_json_atomic"]
DATA_FILE = "data.jsonl"
LEDGER_FILE = "ledger.jsonl"

SampleKey = tuple[str, int]


def sample_key(prompt_id: str | int, sample: int) -> SampleKey:
    """The ledger key of one sample; ids are compared as text (JSON may turn 7 into "7")."""
    return (str(prompt_id), int(sample))


def _repair_tail(path: Path) -> int:
    """Cut a torn last line off an append-only JSONL file; returns the bytes removed."""
    if not path.exists():
        return 0
    size = path.stat().st_size
    if size == 0:
        return 0
    with path.open("rb+") as f:
        f.seek(0)
        data = f.read()
        if data.endswith(b"\n"):
            return 0
        keep = data.rfind(b"\n") + 1
        f.truncate(keep)
    crash_point()
    return size - keep


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a JSONL file (none if it does not exist)."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


class RunStore:
    """The append-only files of one synthesis run, opened fresh or for resume."""

    def __init__(self, out_dir: str | Path) -> None:
        self.out_dir = Path(out_dir)
        self.data_path = self.out_dir / DATA_FILE
        self.ledger_path = self.out_dir / LEDGER_FILE
        self.run_path = self.out_dir / RUN_FILE
        self.provenance_path = self.out_dir / PROVENANCE_FILE
        self.done: set[SampleKey] = set()
        self._data: Any = None
        self._ledger: Any = None
        self._pending: list[dict[str, Any]] = []  # ledger lines waiting for their data rows

    def open(
        self,
        run_config: dict[str, Any],
        *,
        rejudge: Callable[[dict[str, Any]], dict[str, Any]],
        force: bool = False,
    ) -> int:
        """Start a run, or resume the one in `out_dir` if its settings match.

        Args:
            run_config: the settings that define the run (model, mode, k, sampling, prompts).
            rejudge: rebuilds the ledger entry of a kept data row whose ledger line was lost.
            force: discard an existing run with other settings instead of refusing.

        Returns:
            The number of samples already done (0 for a fresh run).
        """
        self.out_dir.mkdir(parents=True, exist_ok=True)
        if self.run_path.exists():
            stored = json.loads(self.run_path.read_text(encoding="utf-8"))
            if stored != run_config:
                if not force:
                    changed = sorted(
                        k for k in {*stored, *run_config} if stored.get(k) != run_config.get(k)
                    )
                    raise SynthFileError(
                        f"{self.out_dir} holds a run with other settings ({', '.join(changed)}): "
                        "resume with the same settings, choose another --out, or pass --force "
                        "to start over.",
                        path=self.out_dir,
                    )
                self._discard()
        elif self.data_path.exists() or self.ledger_path.exists():
            if not force:
                raise SynthFileError(
                    f"{self.out_dir} holds synthesis files but no {RUN_FILE}: choose another "
                    "--out or pass --force to start over.",
                    path=self.out_dir,
                )
            self._discard()
        if not self.run_path.exists():
            write_json_atomic(self.run_path, run_config)
        self.provenance_path.unlink(missing_ok=True)  # stale once the run continues
        _repair_tail(self.data_path)
        _repair_tail(self.ledger_path)
        self.done = {sample_key(e["prompt_id"], e["sample"]) for e in read_jsonl(self.ledger_path)}
        self._data = self.data_path.open("a", encoding="utf-8")
        self._ledger = self.ledger_path.open("a", encoding="utf-8")
        # Kept rows written just before a crash, whose ledger line never made it.
        for row in read_jsonl(self.data_path):
            key = sample_key(row["prompt_id"], row["sample"])
            if key not in self.done:
                self._pending.append(rejudge(row))
                self.done.add(key)
        self.flush()
        return len(self.done)

    def _discard(self) -> None:
        for path in (self.run_path, self.data_path, self.ledger_path, self.provenance_path):
            path.unlink(missing_ok=True)

    @staticmethod
    def _write(handle: Any, record: dict[str, Any]) -> None:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")

    def append(self, ledger_entry: dict[str, Any], row: dict[str, Any] | None) -> None:
        """Record one judged sample; `row` is its kept data row (None when not kept)."""
        key = sample_key(ledger_entry["prompt_id"], ledger_entry["sample"])
        if key in self.done:
            return  # never twice, whatever the caller does
        if row is not None:
            self._write(self._data, row)
            crash_point()
        self._pending.append(ledger_entry)  # written by `flush`, after the data rows
        self.done.add(key)

    def flush(self) -> None:
        """Make the batch durable: data rows on disk first, then the ledger lines for them.

        Two fsyncs per batch: cheap next to generation.
        """
        if self._data is None or self._ledger is None:
            return
        self._data.flush()
        crash_point()
        os.fsync(self._data.fileno())
        crash_point()
        for entry in self._pending:
            self._write(self._ledger, entry)
            crash_point()
        self._pending.clear()
        self._ledger.flush()
        crash_point()
        os.fsync(self._ledger.fileno())
        crash_point()

    def close(self) -> None:
        """Flush and close the files."""
        self.flush()
        for handle in (self._data, self._ledger):
            if handle is not None:
                handle.close()
        self._data = self._ledger = None
