"""Data mix specs in the card's syntax, and per-source local path overrides.

A mix is a comma-separated list of `name:all` or `name:N` items, for example
`tulu3:all,smoltalk:all,magpie:all,numina:all`, `iflensyn:33000` or
`phr1:all,phrw:all,iflensyn:6000`. `name:all` takes every usable row in source order; `name:N`
takes N usable rows drawn at random without replacement, seeded (same seed, same rows). A bare
`name` means `name:all`.

Local overrides are `NAME=PATH` strings (`--source tulu3=/data/tulu3.jsonl` on the command line,
`sources.tulu3=/data/tulu3.jsonl` as a recipe override).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from rsi_hub.data.sources import SOURCES
from rsi_hub.errors import MixSpecError

_ITEM = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+)(?::(?P<count>all|[0-9][0-9_]*))?$")


@dataclass(frozen=True)
class MixItem:
    """One item of a mix: a source name and how many rows to take (`None` = all)."""

    name: str
    count: int | None

    def __str__(self) -> str:
        return f"{self.name}:{'all' if self.count is None else self.count}"


def parse_mix(spec: str) -> list[MixItem]:
    """Parse a mix spec such as `tulu3:all,iflensyn:33000` into `MixItem`s, in order.

    Raises:
        MixSpecError: malformed item, unknown source, duplicate source, zero count, or sources
            of different kinds (SFT conversations and preference pairs cannot be mixed).
    """
    items: list[MixItem] = []
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    if not parts:
        raise MixSpecError("empty mix: give items like `tulu3:all,iflensyn:33000`")
    for part in parts:
        match = _ITEM.match(part)
        if match is None:
            raise MixSpecError(
                f"mix item {part!r} is not `name:all` or `name:N` (N a positive count)"
            )
        name = match["name"]
        if name not in SOURCES:
            raise MixSpecError(
                f"mix item {part!r}: unknown source {name!r}; known: {', '.join(SOURCES)}"
            )
        raw = match["count"]
        count = None if raw in (None, "all") else int(raw.replace("_", ""))
        if count == 0:
            raise MixSpecError(f"mix item {part!r}: a count must be positive (or `all`)")
        if any(item.name == name for item in items):
            raise MixSpecError(f"mix {spec!r} names source {name!r} twice")
        items.append(MixItem(name, count))
    kinds = {SOURCES[item.name].kind for item in items}
    if len(kinds) > 1:
        raise MixSpecError(
            f"mix {spec!r} mixes SFT sources with preference sources; prepare them separately"
        )
    return items


def format_mix(items: Iterable[MixItem]) -> str:
    """The canonical spec string of parsed items (`tulu3:all,iflensyn:33000`)."""
    return ",".join(str(item) for item in items)


def mix_kind(items: list[MixItem]) -> str:
    """`sft` or `pref`: the kind of every source of a parsed mix."""
    return SOURCES[items[0].name].kind


def parse_source_overrides(values: Iterable[str]) -> dict[str, str]:
    """Parse `NAME=PATH` strings into a mapping of source name to local path.

    Raises:
        MixSpecError: not `NAME=PATH`, or an unknown source name.
    """
    overrides: dict[str, str] = {}
    for value in values:
        name, sep, path = value.partition("=")
        name, path = name.strip(), path.strip()
        if not sep or not name or not path:
            raise MixSpecError(
                f"source override {value!r} is not NAME=PATH (e.g. tulu3=data/tulu3.jsonl)"
            )
        if name not in SOURCES:
            raise MixSpecError(
                f"source override {value!r}: unknown source {name!r}; known: {', '.join(SOURCES)}"
            )
        overrides[name] = path
    return overrides


def source_seed(seed: int, name: str) -> list[int]:
    """The RNG seed of one source's sample: the mix seed and a stable digest of the name.

    Drawing each source from its own stream keeps a source's sample unchanged when other items
    of the mix change.
    """
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return [seed, int.from_bytes(digest[:8], "little")]
