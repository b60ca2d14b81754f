"""Sharded synthesis: `--shard I/N` runs one slice of the prompts, `synth merge` joins them.

The slice is round-robin over the selected prompts (after eligibility, `--only-checks` and
`--limit`): shard I of N takes prompts I, I+N, I+2N, ... So the N slices are disjoint, cover
the selection exactly, are balanced in size and in whatever order the pool has (difficulty,
topic), and depend on nothing but the selection and (I, N). Each shard is an ordinary resumable
run in its own folder; its `run.json` also records the shard and the sha256 of the whole
selection's ids, so shards of different selections cannot be merged.

`merge_shards` checks that the shards agree on everything but the slice, that shards 0..N-1 are
all there once and finished, rebuilds the whole selection's order, and writes one run folder
(data, ledger, `run.json`, one `provenance.json`) that is exactly what the unsharded run would
have written: same rows in the same order, same `run.json`, so the same data sha256.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from rsi_hub.errors import SynthFileError, SynthInputError
from rsi_hub.rundir import SynthProvenance, read_json_object, write_json_atomic
from rsi_hub.staging import fresh_staging_dir, recover_swap, swap_in
from rsi_hub.suites.prompts import prompt_ids_sha256
from rsi_hub.synth.provenance import Audit, build_provenance
from rsi_hub.synth.stats import ledger_stats
from rsi_hub.synth.store import (
    DATA_FILE,
    LEDGER_FILE,
    PROVENANCE_FILE,
    RUN_FILE,
    read_jsonl,
    sample_key,
)

T = TypeVar("T")
SHARD_KEY = "shard"
# run.json fields that differ between the shards of one run (the slice), all else must match.
PER_SHARD_FIELDS = (SHARD_KEY, "n_prompts", "prompt_ids_sha256")


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (0-based), as `--shard INDEX/COUNT` names it."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """Parse `I/N` with 0 <= I < N.

        Raises:
            SynthInputError: not of that form (field `shard`).
        """
        index, sep, count = str(text).partition("/")
        if not sep or not index.strip().isdigit() or not count.strip().isdigit():
            raise SynthInputError(
                f"--shard {text!r}: write I/N, the 0-based shard I of N (e.g. 0/4).",
                field="shard",
            )
        shard = cls(int(index), int(count))
        if shard.count < 1 or not 0 <= shard.index < shard.count:
            raise SynthInputError(
                f"--shard {text!r}: I must be in 0..N-1 and N at least 1 (e.g. 0/4 ... 3/4).",
                field="shard",
            )
        return shard

    def select(self, items: Sequence[T]) -> list[T]:
        """This shard's round-robin slice of `items`."""
        return list(items[self.index :: self.count])

    def record(self, pool_ids: Sequence[Any]) -> dict[str, Any]:
        """The `shard` entry of run.json: the slice and the whole selection it was cut from."""
        return {
            "index": self.index,
            "count": self.count,
            "pool_prompts": len(pool_ids),
            "pool_prompt_ids_sha256": prompt_ids_sha256(list(pool_ids)),
        }


@dataclass(frozen=True)
class _ShardRun:
    folder: Path
    run_config: dict[str, Any]
    provenance: SynthProvenance

    @property
    def shard(self) -> dict[str, Any]:
        return self.run_config[SHARD_KEY]


def _read_shard(folder: Path) -> _ShardRun:
    run_path, provenance_path = folder / RUN_FILE, folder / PROVENANCE_FILE
    if not run_path.is_file():
        raise SynthFileError(
            f"{folder}: no {RUN_FILE}, not a synthesis run; pass the --out folders of "
            "`rsi-hub synth ... --shard I/N`.",
            path=run_path,
        )
    run_config = read_json_object(run_path, regenerate="re-run the shard's `rsi-hub synth`")
    if not isinstance(run_config.get(SHARD_KEY), dict):
        raise SynthInputError(
            f"{folder}: {RUN_FILE} has no `shard` entry: it is an unsharded run, not a shard.",
            field="shard",
        )
    if not provenance_path.is_file():
        raise SynthFileError(
            f"{folder}: shard {run_config[SHARD_KEY].get('index')} has not finished (no "
            f"{PROVENANCE_FILE}); run its command again (it resumes), then merge.",
            path=provenance_path,
        )
    return _ShardRun(folder, run_config, SynthProvenance.read_file(provenance_path))


def _check_compatible(shards: list[_ShardRun]) -> int:
    """The shard count, after checking that the shards make exactly one whole run."""
    first = shards[0]
    common = {k: v for k, v in first.run_config.items() if k not in PER_SHARD_FIELDS}
    for other in shards[1:]:
        mine = {k: v for k, v in other.run_config.items() if k not in PER_SHARD_FIELDS}
        differ = sorted(k for k in {*common, *mine} if common.get(k) != mine.get(k))
        whole = ("count", "pool_prompts", "pool_prompt_ids_sha256")
        differ += [
            f"shard.{k}" for k in whole if other.shard.get(k) != first.shard.get(k)
        ]  # fmt: skip
        if differ:
            raise SynthInputError(
                f"{other.folder} and {first.folder} are shards of different runs ({RUN_FILE} "
                f"differs in {', '.join(differ)}): merge only the shards of one command.",
                field=differ[0],
            )
    count = int(first.shard["count"])
    indexes = sorted(int(s.shard["index"]) for s in shards)
    if indexes != list(range(count)):
        missing = sorted(set(range(count)) - set(indexes))
        repeated = sorted({i for i in indexes if indexes.count(i) > 1})
        raise SynthInputError(
            f"a merge needs shards 0..{count - 1} once each: "
            + (f"missing {missing}" if missing else "")
            + ("; " if missing and repeated else "")
            + (f"given twice {repeated}" if repeated else ""),
            field="shard",
        )
    return count


def _whole_order(shards: list[_ShardRun], count: int) -> list[Any]:
    """The whole selection's prompt ids in order, rebuilt from the round-robin slices."""
    by_index = {int(s.shard["index"]): list(s.provenance.prompt_ids or []) for s in shards}
    total = int(shards[0].shard["pool_prompts"])
    for index, ids in by_index.items():
        expected = len(range(index, total, count))
        if len(ids) != expected:
            raise SynthInputError(
                f"shard {index}/{count} holds {len(ids)} prompts, but its slice of the "
                f"{total}-prompt selection has {expected}: re-run it.",
                field="shard",
            )
    order = [by_index[j % count][j // count] for j in range(total)]
    if prompt_ids_sha256(order) != shards[0].shard["pool_prompt_ids_sha256"]:
        raise SynthInputError(
            "the shards' prompts, interleaved, are not the selection they were cut from "
            "(shard.pool_prompt_ids_sha256 differs): re-run the shards.",
            field="shard",
        )
    return order


def _merged_records(
    shards: list[_ShardRun], file_name: str, position: dict[str, int]
) -> list[dict[str, Any]]:
    records = []
    seen: dict[tuple[str, int], Path] = {}
    for shard in shards:
        for record in read_jsonl(shard.folder / file_name):
            key = sample_key(record["prompt_id"], record["sample"])
            if key in seen:
                raise SynthInputError(
                    f"sample {key} is in {file_name} of both {seen[key]} and {shard.folder}: "
                    "the shards overlap; re-run them.",
                    field="shard",
                )
            seen[key] = shard.folder
            records.append(record)
    records.sort(key=lambda r: (position[str(r["prompt_id"])], int(r["sample"])))
    return records


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    # The same serialisation as the run store's append, so merged bytes equal unsharded bytes.
    with path.open("w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")


def merge_shards(
    shard_dirs: Sequence[str | Path], out: str | Path, audit: Audit
) -> SynthProvenance:
    """Join finished shards into one run folder `out` with one provenance record.

    Idempotent: merging the same shards into the same `out` again leaves it as it is.

    Args:
        shard_dirs: the `--out` folders of `rsi-hub synth ... --shard I/N`, I = 0..N-1.
        out: the merged run folder (replaced whole, never left half-written).
        audit: the contamination audit run on the merged data.

    Raises:
        SynthInputError: the shards come from different commands, one is missing or repeated,
            or two hold the same sample; SynthFileError: a folder is not a finished shard.
    """
    out = Path(out)
    if not shard_dirs:
        raise SynthInputError("synth merge needs the shard folders.", field="shards")
    shards = [_read_shard(Path(d)) for d in shard_dirs]
    count = _check_compatible(shards)
    merged_from = [
        {
            "folder": str(s.folder),
            "shard": f"{s.shard['index']}/{count}",
            "data_sha256": s.provenance.data_sha256,
        }
        for s in sorted(shards, key=lambda s: int(s.shard["index"]))
    ]
    recover_swap(out)
    existing = out / PROVENANCE_FILE
    previous = SynthProvenance.read_file(existing) if existing.is_file() else None
    if previous is not None and previous.extra.get("merged_from") == merged_from:
        return previous
    if (
        out.exists()
        and any(out.iterdir())
        and (previous is None or "merged_from" not in previous.extra)
    ):
        # Only an earlier merge is replaced; anything else there is someone's data.
        raise SynthFileError(
            f"{out} holds files that are not an earlier merge: choose another --out.",
            path=out,
        )
    order = _whole_order(shards, count)
    position = {str(pid): i for i, pid in enumerate(order)}
    run_config = {k: v for k, v in shards[0].run_config.items() if k != SHARD_KEY}
    run_config["n_prompts"] = len(order)
    run_config["prompt_ids_sha256"] = prompt_ids_sha256(order)

    staging = fresh_staging_dir(out, "merging")
    _write_jsonl(staging / DATA_FILE, _merged_records(shards, DATA_FILE, position))
    ledger = _merged_records(shards, LEDGER_FILE, position)
    _write_jsonl(staging / LEDGER_FILE, ledger)
    write_json_atomic(staging / RUN_FILE, run_config)
    provenance = build_provenance(
        run_config=run_config,
        stats=ledger_stats(ledger),
        data_path=staging / DATA_FILE,
        prompt_ids=order,
        audit=dict(audit(staging / DATA_FILE)),
    )
    provenance.extra["merged_from"] = merged_from
    provenance.write_file(staging / PROVENANCE_FILE)
    swap_in(staging, out)
    return provenance
