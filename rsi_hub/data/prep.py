"""`rsi-hub prep`: a mix of sources -> tokenised, assistant-masked training data + stats + sha256.

Output folder layout:

    DIR/data.arrow   the rows (an Arrow stream; `datasets.Dataset.from_file` memory-maps it)
    DIR/stats.json   the card's table columns per source and in total, the holdout report,
                     the dataset sha256 and the inputs that produced it (its fingerprint)

SFT rows have `input_ids` (int32), `assistant_masks` (int8, 1 = supervised) and `source`.
Preference rows (SimPO) have `prompt`, `chosen`, `rejected` strings, pre-rendered: the prompt
ends with the generation prompt `<|im_start|>assistant\\n`, each answer ends exactly at
`<|im_end|>` (TRL would otherwise double it or add `<s>`).

The dataset sha256 is defined on the rows, not on file bytes, so any writer reproduces it:
- SFT: sha256 over, for each row in order, `len(input_ids)` as uint32 little-endian, then the
  ids as int32 little-endian, then the mask as one uint8 per token;
- preferences: sha256 over, for each row in order, the UTF-8 JSON array
  `[prompt, chosen, rejected]` (`ensure_ascii=False`, separators `,` and `:`) and a newline.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rsi_hub import __version__
from rsi_hub.batching import batched
from rsi_hub.chat import IM_END_TOKEN, render
from rsi_hub.crashpoint import crash_point
from rsi_hub.data.config import PrepConfig
from rsi_hub.data.convert import PreferenceRow, UnrecognisedRow
from rsi_hub.data.holdout import HoldoutGuard, PromptMatcher, default_holdout_matcher
from rsi_hub.data.masking import (
    SystemPolicy,
    TokenisedRow,
    apply_system_policy,
    conversation_segments,
    tokenise_segments,
)
from rsi_hub.data.mix import MixItem, format_mix, mix_kind, parse_mix, source_seed
from rsi_hub.data.sources import get_source, load_source
from rsi_hub.errors import DataSourceError
from rsi_hub.staging import fresh_staging_dir, refuse_non_empty, swap_in

DATA_FILE = "data.arrow"
STATS_FILE = "stats.json"
FORMAT = "rsi-hub prepared data v1"
SHA256_DEFINITION = {
    "sft": "sha256 over rows in order of: uint32-LE token count, int32-LE input_ids, uint8 assistant_masks",
    "pref": "sha256 over rows in order of: UTF-8 JSON [prompt, chosen, rejected] (ensure_ascii=False, "
    "separators ',' ':') + '\\n'",
}
# Rows read, converted and tokenised together (one batched tokenizer call per batch).
BATCH_ROWS = 512


@dataclass
class SourceStats:
    """Counts for one source of a mix (the card's table columns and what was dropped)."""

    origin: str
    requested: str
    examined: int = 0
    samples: int = 0
    tokens: int = 0
    supervised_tokens: int = 0
    dropped_unusable: int = 0
    dropped_holdout: int = 0
    dropped_too_long: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The counts plus the supervised fraction, rounded as the card prints it."""
        out = dict(self.__dict__)
        out["supervised_fraction"] = (
            round(self.supervised_tokens / self.tokens, 4) if self.tokens else 0.0
        )
        return out


@dataclass
class PrepResult:
    """What `prepare` wrote: the folder, the dataset sha256 and the full stats."""

    path: Path
    sha256: str
    stats: dict[str, Any] = field(repr=False)

    @property
    def samples(self) -> int:
        """Rows written."""
        return int(self.stats["total"]["samples"])


def _load_tokenizer(tokenizer: Any) -> Any:
    if isinstance(tokenizer, str | Path):
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(str(tokenizer))
    return tokenizer


def tokenizer_fingerprint(tokenizer: Any) -> str:
    """sha256 of the tokenizer's full serialisation (vocabulary, merges, special tokens)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    text = (
        backend.to_str()
        if backend is not None
        else json.dumps(tokenizer.get_vocab(), sort_keys=True)
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _user_prompts(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "user"]


def _rows(dataset: Any, item: MixItem, seed: int) -> Iterator[tuple[int, Mapping[str, Any]]]:
    # All rows in source order, or a seeded random permutation to draw `count` from.
    n = len(dataset)
    order = (
        None
        if item.count is None
        else np.random.default_rng(source_seed(seed, item.name)).permutation(n)
    )
    for start in range(0, n, BATCH_ROWS):
        if order is None:
            indices: Any = range(start, min(start + BATCH_ROWS, n))
            batch = dataset[start : start + BATCH_ROWS]
        else:
            indices = order[start : start + BATCH_ROWS].tolist()
            batch = dataset[indices]
        columns = list(batch)
        for index, values in zip(
            indices, zip(*(batch[c] for c in columns), strict=True), strict=True
        ):
            yield index, dict(zip(columns, values, strict=True))


class _Writer:
    """Streams rows to the Arrow file while hashing them."""

    def __init__(self, path: Path, kind: str) -> None:
        import pyarrow as pa

        self.pa = pa
        self.kind = kind
        if kind == "sft":
            self.schema = pa.schema(
                [
                    ("input_ids", pa.list_(pa.int32())),
                    ("assistant_masks", pa.list_(pa.int8())),
                    ("source", pa.string()),
                ]
            )
        else:
            self.schema = pa.schema(
                [(c, pa.string()) for c in ("prompt", "chosen", "rejected", "source")]
            )
        self.sink = pa.OSFile(str(path), "wb")
        self.stream = pa.ipc.new_stream(self.sink, self.schema)
        self.hash = hashlib.sha256()

    def write_sft(self, rows: list[TokenisedRow], source: str) -> None:
        pa = self.pa
        for row in rows:
            self.hash.update(struct.pack("<I", len(row.input_ids)))
            self.hash.update(np.asarray(row.input_ids, dtype="<i4").tobytes())
            self.hash.update(np.asarray(row.assistant_masks, dtype="u1").tobytes())
        batch = pa.record_batch(
            [
                pa.array([r.input_ids for r in rows], pa.list_(pa.int32())),
                pa.array([r.assistant_masks for r in rows], pa.list_(pa.int8())),
                pa.array([source] * len(rows), pa.string()),
            ],
            schema=self.schema,
        )
        self.stream.write_batch(batch)
        crash_point()

    def write_pref(self, rows: list[tuple[str, str, str]], source: str) -> None:
        pa = self.pa
        for row in rows:
            line = json.dumps(list(row), ensure_ascii=False, separators=(",", ":")) + "\n"
            self.hash.update(line.encode("utf-8"))
        columns = [pa.array([r[i] for r in rows], pa.string()) for i in range(3)]
        columns.append(pa.array([source] * len(rows), pa.string()))
        self.stream.write_batch(pa.record_batch(columns, schema=self.schema))
        crash_point()

    def close(self) -> str:
        self.stream.close()
        self.sink.close()
        crash_point()
        return self.hash.hexdigest()


def _convert(
    source_name: str, origin: str, converter: Any, row: Mapping[str, Any], index: int
) -> Any:
    try:
        return converter(row)
    except UnrecognisedRow as err:
        raise DataSourceError(f"source {source_name} ({origin}), row {index}: {err}") from None


def _prep_sft_source(
    item: MixItem, dataset: Any, stats: SourceStats, ctx: _Context, writer: _Writer
) -> None:
    converter = get_source(item.name).converter
    for batch in batched(_rows(dataset, item, ctx.seed), BATCH_ROWS):
        segmented = []
        for index, row in batch:
            stats.examined += 1
            messages = _convert(item.name, stats.origin, converter, row, index)
            if messages is None:
                stats.dropped_unusable += 1
                continue
            if ctx.guard is not None and not ctx.guard.admit(item.name, _user_prompts(messages)):
                stats.dropped_holdout += 1
                continue
            segmented.append(conversation_segments(apply_system_policy(messages, ctx.system)))
        kept = []
        for row in tokenise_segments(ctx.tokenizer, segmented):
            if len(row.input_ids) > ctx.max_length:
                stats.dropped_too_long += 1
                continue
            if item.count is not None and stats.samples + len(kept) >= item.count:
                break
            kept.append(row)
        if kept:
            writer.write_sft(kept, item.name)
            stats.samples += len(kept)
            stats.tokens += sum(len(r.input_ids) for r in kept)
            stats.supervised_tokens += sum(r.supervised for r in kept)
        if item.count is not None and stats.samples >= item.count:
            return


def _prep_pref_source(
    item: MixItem, dataset: Any, stats: SourceStats, ctx: _Context, writer: _Writer
) -> None:
    converter = get_source(item.name).converter
    for batch in batched(_rows(dataset, item, ctx.seed), BATCH_ROWS):
        rendered: list[tuple[str, str, str]] = []
        for index, row in batch:
            stats.examined += 1
            pair: PreferenceRow | None = _convert(item.name, stats.origin, converter, row, index)
            if pair is None:
                stats.dropped_unusable += 1
                continue
            if ctx.guard is not None and not ctx.guard.admit(item.name, _user_prompts(pair.prompt)):
                stats.dropped_holdout += 1
                continue
            rendered.append(render_preference(pair, ctx.system))
        if not rendered:
            continue
        flat = [text for row in rendered for text in row]
        lengths = [len(ids) for ids in ctx.tokenizer(flat, add_special_tokens=False)["input_ids"]]
        kept = []
        for i, row in enumerate(rendered):
            prompt, chosen, rejected = lengths[3 * i : 3 * i + 3]
            if prompt + max(chosen, rejected) > ctx.max_length:
                stats.dropped_too_long += 1
                continue
            if item.count is not None and stats.samples + len(kept) >= item.count:
                break
            kept.append(row)
            stats.tokens += prompt + chosen + rejected
            stats.supervised_tokens += chosen + rejected
        if kept:
            writer.write_pref(kept, item.name)
            stats.samples += len(kept)
        if item.count is not None and stats.samples >= item.count:
            return


def render_preference(pair: PreferenceRow, system: SystemPolicy = "keep") -> tuple[str, str, str]:
    """Pre-render one preference pair for TRL's CPOTrainer as `(prompt, chosen, rejected)`.

    The prompt is the rendered conversation ending with the generation prompt; each answer ends
    exactly at `<|im_end|>`, so TRL neither doubles the end-of-turn token nor adds one.
    """
    prompt = render(
        apply_system_policy(pair.prompt, system),
        add_generation_prompt=True,
        use_default_system_prompt=False,
    )
    return prompt, pair.chosen + IM_END_TOKEN, pair.rejected + IM_END_TOKEN


@dataclass
class _Context:
    tokenizer: Any
    seed: int
    system: SystemPolicy
    max_length: int
    guard: HoldoutGuard | None


def prep_fingerprint(
    mix: str,
    *,
    tokenizer: Any,
    sources: Mapping[str, str] | None = None,
    seed: int = 0,
    system: SystemPolicy = "keep",
    max_length: int = 8192,
    holdout_guard: bool = True,
) -> dict[str, Any]:
    """The inputs that determine a prepared data set; equal fingerprints give equal data.

    `rsi-hub train` reuses a prepared folder only when its recorded fingerprint equals this.
    """
    items = parse_mix(mix)
    sources = dict(sources or {})
    origins = {}
    for item in items:
        path = sources.get(item.name)
        origins[item.name] = (
            f"path:{Path(path).resolve()}" if path else get_source(item.name).origin
        )
    return {
        "format": FORMAT,
        "kind": mix_kind(items),
        "mix": format_mix(items),
        "origins": origins,
        "seed": seed,
        "system": system,
        "max_length": max_length,
        "tokenizer_sha256": tokenizer_fingerprint(_load_tokenizer(tokenizer)),
        "holdout_guard": bool(holdout_guard),
    }


def prepare(
    config: PrepConfig,
    *,
    tokenizer: Any = None,
    holdout_matcher: PromptMatcher | None = None,
) -> PrepResult:
    """Prepare a data mix into `config.out`: convert, guard, render, tokenise, mask, write, hash.

    Args:
        config: the mix (the card's syntax, e.g. `tulu3:all,smoltalk:all` or `iflensyn:33000`),
            the output folder (must be empty or absent unless `force`), local source overrides,
            the seed of the `name:N` samples, the system-message policy (`keep`: the row's own,
            else none; `k0`: the served prompt on every row; `none`), `max_length` (longer rows
            are dropped and counted, never cut, so every kept answer still ends in
            `<|im_end|>`) and the holdout guard (turning it off is recorded in the stats); see
            `PrepConfig`.
        tokenizer: a loaded tokenizer to use instead of loading `config.tokenizer`.
        holdout_matcher: the holdout index to use (default: `rsi_hub.suites.HoldoutIndex`).

    Returns:
        The folder, the dataset sha256 and the stats (also written to `stats.json`).

    Raises:
        MixSpecError, DataSourceError, HoldoutInputError, OutputDirNotEmptyError.
    """
    mix, seed, system, max_length = config.mix, config.seed, config.system, config.max_length
    holdout_guard, sources = config.holdout_guard, dict(config.sources)
    items = parse_mix(mix)
    kind = mix_kind(items)
    out = Path(config.out)
    refuse_non_empty(out, force=config.force)
    tokenizer = _load_tokenizer(config.tokenizer if tokenizer is None else tokenizer)
    guard = None
    if holdout_guard:
        guard = HoldoutGuard(
            holdout_matcher if holdout_matcher is not None else default_holdout_matcher()
        )
    fingerprint = prep_fingerprint(
        mix, tokenizer=tokenizer, sources=sources, seed=seed, system=system,
        max_length=max_length, holdout_guard=holdout_guard,
    )  # fmt: skip
    # Load every source before writing anything: a missing source fails before any work.
    loaded = {item.name: load_source(item.name, sources.get(item.name)) for item in items}

    staging = fresh_staging_dir(out, "prep")
    writer = _Writer(staging / DATA_FILE, kind)
    ctx = _Context(tokenizer, seed, system, max_length, guard)
    per_source: dict[str, SourceStats] = {}
    try:
        for item in items:
            stats = SourceStats(
                fingerprint["origins"][item.name], "all" if item.count is None else str(item.count)
            )
            per_source[item.name] = stats
            prep_source = _prep_sft_source if kind == "sft" else _prep_pref_source
            prep_source(item, loaded[item.name], stats, ctx, writer)
    finally:
        sha256 = writer.close()

    stats_doc = _stats_document(fingerprint, per_source, sha256, kind, guard)
    (staging / STATS_FILE).write_text(json.dumps(stats_doc, indent=2) + "\n", encoding="utf-8")
    crash_point()
    swap_in(staging, out)
    return PrepResult(out, sha256, stats_doc)


def _stats_document(
    fingerprint: dict[str, Any],
    per_source: dict[str, SourceStats],
    sha256: str,
    kind: str,
    guard: HoldoutGuard | None,
) -> dict[str, Any]:
    total = SourceStats(origin="mix", requested=fingerprint["mix"])
    for stats in per_source.values():
        for name in ("examined", "samples", "tokens", "supervised_tokens", "dropped_unusable",
                     "dropped_holdout", "dropped_too_long"):  # fmt: skip
            setattr(total, name, getattr(total, name) + getattr(stats, name))
    sources = {name: stats.as_dict() for name, stats in per_source.items()}
    return {
        "format": FORMAT,
        "kind": kind,
        "sha256": sha256,
        "sha256_definition": SHA256_DEFINITION[kind],
        "rsi_hub_version": __version__,
        "fingerprint": fingerprint,
        "table": [
            {
                "short name": name,
                "source": s["origin"],
                "samples": s["samples"],
                "tokens": s["tokens"],
                "supervised fraction": s["supervised_fraction"],
            }
            for name, s in sources.items()
        ],
        "sources": sources,
        "total": total.as_dict(),
        "holdout": guard.report() if guard is not None else {"guard": "disabled", "dropped": 0},
    }


def read_stats(path: str | Path) -> dict[str, Any]:
    """The `stats.json` of a prepared folder.

    Raises:
        DataSourceError: `path` is not a prepared folder.
    """
    stats_path = Path(path) / STATS_FILE
    if not stats_path.is_file() or not (Path(path) / DATA_FILE).is_file():
        raise DataSourceError(
            f"{path} is not a prepared data folder (no {STATS_FILE} / {DATA_FILE}); run `rsi-hub prep`"
        )
    return json.loads(stats_path.read_text(encoding="utf-8"))


def load_prepared(path: str | Path) -> Any:
    """The rows of a prepared folder as a memory-mapped `datasets.Dataset`."""
    import datasets

    read_stats(path)
    return datasets.Dataset.from_file(str(Path(path) / DATA_FILE))


def format_table(stats: Mapping[str, Any]) -> str:
    """The card's table (short name, source, samples, tokens, supervised fraction) as text."""
    lines = ["short name\tsource\tsamples\ttokens\tsupervised fraction"]
    for row in stats["table"]:
        lines.append(
            f"{row['short name']}\t{row['source']}\t{row['samples']:,}\t{_tokens(row['tokens'])}\t"
            f"{row['supervised fraction']}"
        )
    total = stats["total"]
    lines.append(f"total\t{stats['fingerprint']['mix']}\t{total['samples']:,}\t{_tokens(total['tokens'])}\t"
                 f"{total['supervised_fraction']}")  # fmt: skip
    return "\n".join(lines)


def _tokens(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 100_000 else f"{n:,}"
