"""Weight soups (card section 3: SOUP1 / soup7): a weighted average of checkpoints.

Streams tensor by tensor: each ingredient's shards are opened with `safe_open` one shard at a
time (and reopened every `read_window` bytes), each output tensor is accumulated in FP32 from the
ingredients and written to its planned output shard at once (see `rsi_hub.experiments.shards`).
The resident memory a soup adds is therefore bounded by

    ingredients x min(input shard, read window) + 3 x (largest tensor in FP32) + slack

(the mapped pages read since the last reopen; the FP32 accumulator, one ingredient's FP32 copy
and the cast result), never by the checkpoint: two 60 GB checkpoints in 5 GB shards soup in a few
GB. Measured by `tests/bench/soup_memory.py` and checked by `tests/test_soup_memory.py`.

Ingredients must share one architecture and tokenizer: the config, the tokenizer files and the
tensor set (names, shapes, dtypes) are compared first and the first difference is named.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi_hub.crashpoint import crash_point
from rsi_hub.errors import ExperimentFileError, ExperimentInputError
from rsi_hub.experiments.shards import (
    FLOAT_DTYPES,
    INDEX_FILE,
    SINGLE_FILE,
    ShardWriter,
    TensorInfo,
    parse_size,
    plan_shards,
    read_layout,
    shard_name,
    write_index,
)
from rsi_hub.rundir import EVIDENCE_FILE, TrainingEvidence, library_versions, weights_sha256
from rsi_hub.staging import fresh_staging_dir, refuse_non_empty, swap_in

DEFAULT_MAX_SHARD_SIZE = "5GB"
DEFAULT_READ_WINDOW = "512MB"
# Config keys that record who saved a checkpoint, not what it is.
CONFIG_KEYS_IGNORED = frozenset({"_name_or_path", "transformers_version"})
# Files that define the tokenizer and its chat rendering: ingredients must agree on all of them.
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "tokenizer.model",
    "vocab.json",
    "merges.txt",
    "chat_template.jinja",
)
# Not copied from the first ingredient: weights are rewritten, evidence and results are per run.
NOT_COPIED = frozenset({SINGLE_FILE, INDEX_FILE, EVIDENCE_FILE})


class SoupMismatchError(ExperimentInputError):
    """Ingredients differ in config, tokenizer or tensor set; the message names the first difference."""


@dataclass
class SoupReport:
    """What `soup` wrote."""

    out_dir: Path
    shards: list[str]
    tensors: int
    total_bytes: int
    evidence: TrainingEvidence


def normalise_weights(weights: Sequence[float] | None, count: int) -> list[float]:
    """Return the soup weights: uniform when `weights` is None, else checked.

    Weights must be one per ingredient, finite, non-negative and sum to 1 (within 1e-6): a soup
    is a convex combination, and an explicit sum check catches a typo such as `0.5,0.6`.
    """
    if count < 2:
        raise ExperimentInputError(
            f"a soup needs at least two ingredients, got {count}.", field="ingredients"
        )
    if weights is None:
        return [1.0 / count] * count
    values = [float(w) for w in weights]
    if len(values) != count:
        raise ExperimentInputError(
            f"got {len(values)} weights for {count} ingredients: give one each.", field="weights"
        )
    if any(not math.isfinite(w) or w < 0 for w in values):
        raise ExperimentInputError(
            f"weights must be finite and non-negative, got {values}.", field="weights"
        )
    if abs(sum(values) - 1.0) > 1e-6:
        raise ExperimentInputError(
            f"weights must sum to 1, got {values} (sum {sum(values):g}).", field="weights"
        )
    return values


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Describe the first place two JSON-like values differ (keys in sorted order), or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in a or key not in b:
                side = "first" if key not in a else "second"
                return f"{where} is missing from the {side}"
            found = first_difference(a[key], b[key], where)
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path or 'value'} has {len(a)} items against {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    if a != b:
        return f"{path or 'value'} is {json.dumps(a)[:80]} against {json.dumps(b)[:80]}"
    return None


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise ExperimentFileError(f"cannot read {path}: {err}", path=path) from err


def _check_config(first: Path, other: Path) -> None:
    configs = []
    for run in (first, other):
        if not (run / "config.json").is_file():
            raise SoupMismatchError(f"{run} has no config.json: is it a run directory?")
        config = _load_json(run / "config.json")
        configs.append({k: v for k, v in config.items() if k not in CONFIG_KEYS_IGNORED})
    diff = first_difference(*configs)
    if diff:
        raise SoupMismatchError(f"config.json of {first} and {other} differ: {diff}.")


def _check_tokenizer(first: Path, other: Path) -> None:
    for name in TOKENIZER_FILES:
        a, b = first / name, other / name
        if a.is_file() != b.is_file():
            has, lacks = (first, other) if a.is_file() else (other, first)
            raise SoupMismatchError(f"tokenizers differ: {has} has {name}, {lacks} has not.")
        if not a.is_file() or a.read_bytes() == b.read_bytes():
            continue
        detail = "the bytes differ"
        if name.endswith(".json"):
            detail = first_difference(_load_json(a), _load_json(b)) or "the formatting differs"
        raise SoupMismatchError(f"tokenizers differ in {name} ({first} against {other}): {detail}.")


def _check_tensors(
    first: Path, other: Path, a: dict[str, TensorInfo], b: dict[str, TensorInfo]
) -> None:
    missing = sorted(set(a) ^ set(b))
    if missing:
        name = missing[0]
        has, lacks = (first, other) if name in a else (other, first)
        raise SoupMismatchError(
            f"tensor sets differ: {name} is in {has} but not in {lacks} "
            f"({len(missing)} names differ in all)."
        )
    for name in a:
        if a[name].shape != b[name].shape or a[name].dtype != b[name].dtype:
            raise SoupMismatchError(
                f"tensor {name} is {a[name].dtype}{list(a[name].shape)} in {first} but "
                f"{b[name].dtype}{list(b[name].shape)} in {other}."
            )


def check_compatible(runs: Sequence[str | Path]) -> dict[str, TensorInfo]:
    """Check that checkpoints can be souped; return the first one's tensor layout.

    Raises:
        SoupMismatchError: naming the first config key, tokenizer file or tensor that differs.
    """
    paths = [Path(r) for r in runs]
    layout = read_layout(paths[0])
    for other in paths[1:]:
        _check_config(paths[0], other)
        _check_tokenizer(paths[0], other)
        _check_tensors(paths[0], other, layout, read_layout(other))
    return layout


class _IngredientReader:
    """Reads tensors of one checkpoint through `safe_open`, one shard open at a time.

    `safe_open` memory-maps a shard, and every page a tensor is copied from stays resident until
    the shard is closed. Closing it when the reader moves to another shard, or once
    `window_bytes` have been read from it, returns those pages: this is what keeps peak memory
    near min(shard, window) per ingredient, whatever the checkpoint size.
    """

    def __init__(self, folder: Path, window_bytes: int) -> None:
        self.folder = folder
        self.layout = read_layout(folder)
        self.window_bytes = window_bytes
        self._shard: str | None = None
        self._handle: Any = None
        self._read = 0

    def get(self, name: str) -> Any:
        from safetensors import safe_open

        info = self.layout[name]
        if info.shard != self._shard or self._read + info.nbytes > self.window_bytes:
            self.close()
            self._handle = safe_open(str(self.folder / info.shard), framework="pt").__enter__()
            self._shard = info.shard
        self._read += info.nbytes
        return self._handle.get_tensor(name)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.__exit__(None, None, None)
        self._handle, self._shard, self._read = None, None, 0


def _average(
    info: TensorInfo, readers: Sequence[_IngredientReader], weights: Sequence[float]
) -> Any:
    import torch

    if info.dtype not in FLOAT_DTYPES:
        # Integer buffers (counters, index maps) cannot be averaged: they must agree exactly.
        first = readers[0].get(info.name)
        for reader in readers[1:]:
            if not torch.equal(first, reader.get(info.name)):
                raise SoupMismatchError(
                    f"integer tensor {info.name} differs between {readers[0].folder} and "
                    f"{reader.folder}; it cannot be averaged."
                )
        return first
    acc = None
    for reader, weight in zip(readers, weights, strict=True):
        # copy=True: an FP32 tensor from safe_open may be a view of the memory-mapped file, and
        # the accumulator is written in place; never write through to an ingredient.
        tensor = reader.get(info.name).to(torch.float32, copy=acc is None)
        if acc is None:
            acc = tensor.mul_(weight)
        else:
            acc.add_(tensor, alpha=weight)
        del tensor
    assert acc is not None
    return acc.to(_torch_dtype(info.dtype))


def _torch_dtype(dtype: str) -> Any:
    import torch

    return {
        "F64": torch.float64,
        "F32": torch.float32,
        "F16": torch.float16,
        "BF16": torch.bfloat16,
        "F8_E4M3": torch.float8_e4m3fn,
        "F8_E5M2": torch.float8_e5m2,
    }[dtype]


def _tensor_bytes(tensor: Any) -> memoryview:
    import torch

    # Viewing as bytes works for every dtype (numpy has no bfloat16); x86 and ARM are little-endian.
    return memoryview(tensor.contiguous().reshape(-1).view(torch.uint8).numpy())


def _ingredient_evidence(run: Path, weight: float) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "run": str(run.resolve()),
        "name": run.name,
        "weight": weight,
        "weights_sha256": weights_sha256(run),
    }
    record = TrainingEvidence.read_if_any(run)
    if record is not None:
        evidence = record.to_json()
        # Enough of each ingredient's lineage to trace it without the run directory.
        for key in ("base_model", "base_revision", "optimizer_steps", "seed", "slurm", "status"):
            if evidence.get(key) is not None:
                entry[key] = evidence[key]
        data = record.data
        if isinstance(data, dict):
            entry["data"] = {k: data[k] for k in ("mix", "dataset_sha256") if k in data}
    return entry


def _common_value(entries: list[dict[str, Any]], key: str) -> Any:
    values = [json.dumps(e.get(key), sort_keys=True) for e in entries]
    return entries[0].get(key) if len(set(values)) == 1 else None


def soup(
    runs: Sequence[str | Path],
    out_dir: str | Path,
    weights: Sequence[float] | None = None,
    *,
    max_shard_size: str | int = DEFAULT_MAX_SHARD_SIZE,
    read_window: str | int = DEFAULT_READ_WINDOW,
    force: bool = False,
) -> SoupReport:
    """Average the weights of `runs` into a new run directory `out_dir`.

    Args:
        runs: two or more run directories of one architecture and tokenizer.
        out_dir: the soup's run directory; created, written beside it and renamed at the end so
            an interrupted soup leaves nothing half-made.
        weights: one weight per run, non-negative, summing to 1; uniform when None.
        max_shard_size: largest output shard (`5GB`, `500MB` or bytes).
        read_window: bytes read from one memory-mapped input shard before it is reopened; peak
            memory is about one window (or one shard, if smaller) per ingredient plus a few
            copies of the largest tensor.
        force: replace a non-empty `out_dir`.

    Returns:
        A `SoupReport`; the run directory holds the shards, their index, the first ingredient's
        config, tokenizer and serving files, and a `training_evidence.json` naming every
        ingredient with its weight and weights hash.

    Raises:
        SoupMismatchError: the ingredients differ (the message names the first difference).
        OutputDirNotEmptyError: `out_dir` holds files and `force` is false.
    """
    paths = [Path(r) for r in runs]
    weights = normalise_weights(weights, len(paths))
    layout = check_compatible(paths)
    out = Path(out_dir)
    refuse_non_empty(out, force=force)
    staging = fresh_staging_dir(out, "souping")

    plan = plan_shards(layout.values(), parse_size(max_shard_size))
    window = parse_size(read_window)
    readers = [_IngredientReader(p, window) for p in paths]
    try:
        for i, shard in enumerate(plan):
            writer = ShardWriter(staging / shard_name(i, len(plan)), shard)
            for info in shard:
                writer.write(info.name, _tensor_bytes(_average(info, readers, weights)))
            writer.close()
            crash_point()
    finally:
        for reader in readers:
            reader.close()
    write_index(staging, plan, {"format": "pt"})
    crash_point()

    for item in paths[0].iterdir():
        if (
            item.is_file()
            and item.name not in NOT_COPIED
            and not item.name.endswith(".safetensors")
        ):
            shutil.copy2(item, staging / item.name)
            crash_point()

    ingredients = [_ingredient_evidence(p, w) for p, w in zip(paths, weights, strict=True)]
    total = sum(info.nbytes for info in layout.values())
    evidence = TrainingEvidence(
        kind="weight soup",
        status="completed",
        method="weighted average of every tensor, accumulated in float32, "
        "written in the ingredients' dtype",
        ingredients=ingredients,
        base_model=_common_value(ingredients, "base_model"),
        optimizer_steps=0,
        weights_sha256=weights_sha256(staging),
        libraries=library_versions(),
        extra={
            "base_revision": _common_value(ingredients, "base_revision"),
            "tensors": len(layout),
            "total_bytes": total,
            "shards": len(plan),
            "max_shard_bytes": parse_size(max_shard_size),
        },
    )
    evidence.write(staging)
    crash_point()
    swap_in(staging, out)
    return SoupReport(
        out_dir=out,
        shards=[shard_name(i, len(plan)) for i in range(len(plan))],
        tensors=len(layout),
        total_bytes=total,
        evidence=evidence,
    )
