"""Provenance of a synthetic data set: what made it, from which prompts, and what it holds."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rsi_hub.hashing import sha256_file
from rsi_hub.rundir import SynthProvenance, library_versions

# An audit takes the data file and returns a JSON-ready report with a boolean `passed`
# (zero prompt overlap with every holdout).
Audit = Callable[[Path], dict[str, Any]]


def build_provenance(
    *,
    run_config: dict[str, Any],
    stats: dict[str, Any],
    data_path: Path,
    prompt_ids: list[Any],
    audit: dict[str, Any],
) -> SynthProvenance:
    """The provenance record written beside the data as `provenance.json`."""
    provenance = SynthProvenance(
        kind=run_config["mode"],
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        model=run_config["model"],
        weights_sha256=run_config["weights_sha256"],
        backend=run_config["backend"],
        sampling=run_config["sampling"],
        k=run_config["k"],
        scaffold_sha256=run_config.get("scaffold_sha256"),
        system_prompt_sha256=run_config["system_prompt_sha256"],
        checker_version=run_config["checker_version"],
        prompt_source=run_config["prompt_source"],
        check_types=run_config["check_types"],
        prompt_ids_sha256=run_config["prompt_ids_sha256"],
        prompt_ids=prompt_ids,
        data_file=data_path.name,
        data_sha256=sha256_file(data_path),
        rows_kept=stats["kept"],
        rows_generated=stats["generated"],
        stats=stats,
        audit=audit,
        versions=library_versions(),
    )
    if "shard" in run_config:  # one slice of a sharded run (`rsi_hub.synth.shards`)
        provenance.extra["shard"] = run_config["shard"]
    return provenance


def text_sha256(text: str) -> str:
    """sha256 of a text (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
