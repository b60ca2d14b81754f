"""The registry of the card's data sources (section 2) and reading them as `datasets.Dataset`s.

Each source is a Hub dataset (id, config, split) or a local synthetic set, with the converter that
turns its rows into ChatML messages (or preference pairs). Every source can be pointed at a local
file or folder instead of its default; that is how tests and air-gapped machines run:

    rsi-hub prep --mix "tulu3:all" --source tulu3=/data/tulu3.jsonl

A local path may be a `.jsonl`/`.json`/`.parquet` file, a folder of such files, or a folder
written by `datasets.Dataset.save_to_disk`.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rsi_hub.data.convert import PreferenceConverter, SftConverter, to_messages, to_preference
from rsi_hub.errors import DataSourceError, HoldoutInputError
from rsi_hub.shipped import resource_path

SourceKind = Literal["sft", "pref"]

# Card section 2: "the data-prep code refuses prompts*.jsonl inputs" (the evaluation suites).
REFUSED_INPUT_PATTERN = "prompts*.jsonl"
_LOCAL_SUFFIXES = {".jsonl": "json", ".json": "json", ".parquet": "parquet"}


@dataclass(frozen=True)
class Source:
    """One data source of the card.

    Attributes:
        name: the short name used in mix specs (`tulu3`, `iflensyn`, ...).
        kind: `sft` (conversations) or `pref` (chosen/rejected pairs, for SimPO).
        description: what it is, as the card names it.
        hf_id: the Hub dataset id, or `None` for a local synthetic set.
        hf_config: the Hub dataset configuration (subset), if any.
        split: the split to read.
        local_default: default local path of a synthetic set (relative to the working folder).
        resource: a data file shipped in `rsi_hub/resources` (the demo sets).
        converter: turns one raw row into messages (sft) or a `PreferenceRow` (pref).
    """

    name: str
    kind: SourceKind
    description: str
    hf_id: str | None = None
    hf_config: str | None = None
    split: str = "train"
    local_default: str | None = None
    resource: str | None = None
    converter: SftConverter | PreferenceConverter = to_messages

    @property
    def origin(self) -> str:
        """Where the data comes from by default, as recorded in stats and evidence."""
        if self.resource is not None:
            return f"package:rsi_hub/resources/{self.resource}"
        if self.hf_id is None:
            return f"local:{self.local_default}"
        config = f"/{self.hf_config}" if self.hf_config else ""
        return f"hf:{self.hf_id}{config}@{self.split}"


SOURCES: dict[str, Source] = {
    source.name: source
    for source in [
        Source("tulu3", "sft", "Tulu 3 SFT mixture", "allenai/tulu-3-sft-mixture"),
        Source("ultrachat", "sft", "UltraChat 200k", "HuggingFaceH4/ultrachat_200k", split="train_sft"),
        Source("smoltalk", "sft", "SmolTalk", "HuggingFaceTB/smoltalk", hf_config="all"),
        # The card says "Magpie-Align ultra-style mix" (300,001 rows); the Magpie-Align 300K
        # filtered Llama-3.1 set is the closest public match. Point `magpie` at your copy if not.
        Source(
            "magpie", "sft", "Magpie-Align ultra-style mix",
            "Magpie-Align/Magpie-Llama-3.1-Pro-300K-Filtered",
        ),
        Source("numina", "sft", "NuminaMath CoT", "AI-MO/NuminaMath-CoT"),
        Source("openthoughts", "sft", "OpenThoughts (early probe only)", "open-thoughts/OpenThoughts-114k"),
        Source("iflensyn", "sft", "verifier-filtered synthetic IF data (rsi-hub synth lensyn)",
               local_default="data_src/iflensyn/data.jsonl"),
        Source("rft", "sft", "verifier-filtered whole served replies (rsi-hub synth rft)",
               local_default="data_src/rft/data.jsonl"),
        # The CPU replication's teacher: the suites' reference responder, checker-verified
        # (`rsi-hub synth rft --backend reference`); round 1 may replay it (`rft:all,teacher:N`).
        Source("teacher", "sft", "the suites' reference responder's verified replies (rsi-hub synth rft --backend reference)",
               local_default="runs/nano/teacher/data.jsonl"),
        Source("phr1", "sft", "new phrasings of count requests, set 1", local_default="data/phr1.jsonl"),
        Source("phrw", "sft", "new phrasings of word-count requests", local_default="data/phrw.jsonl"),
        Source("dpo_ufb", "pref", "UltraFeedback binarized preference pairs",
               "HuggingFaceH4/ultrafeedback_binarized", split="train_prefs", converter=to_preference),
        # Shipped demo sets: a few dozen short chats / pairs for the tiny checkpoint (smoke recipes).
        Source("demo", "sft", "shipped demo chats", resource="demo_sft.jsonl"),
        Source("demo_pref", "pref", "shipped demo preference pairs", resource="demo_pref.jsonl",
               converter=to_preference),
    ]
}  # fmt: skip


def get_source(name: str) -> Source:
    """The registered source `name`.

    Raises:
        DataSourceError: no such source; the message lists the registered names.
    """
    try:
        return SOURCES[name]
    except KeyError:
        raise DataSourceError(
            f"unknown data source {name!r}; registered sources: {', '.join(SOURCES)}"
        ) from None


def is_refused_input(path: str | Path) -> bool:
    """True for files named like the evaluation prompt files (`prompts*.jsonl`)."""
    return fnmatch.fnmatch(Path(path).name.lower(), REFUSED_INPUT_PATTERN)


def refuse_holdout_files(paths: list[Path]) -> None:
    """Raise if any input file is named `prompts*.jsonl` (card section 2: never train on them).

    Raises:
        HoldoutInputError: naming the refused files.
    """
    refused = [str(p) for p in paths if is_refused_input(p)]
    if refused:
        raise HoldoutInputError(
            f"refusing input file(s) {', '.join(refused)}: files named {REFUSED_INPUT_PATTERN} "
            "hold evaluation prompts and are never training data (card section 2)"
        )


def local_data_files(path: Path) -> tuple[str, list[Path]]:
    """The `datasets` builder name and the data files of a local file or folder.

    Raises:
        DataSourceError: the path is missing or holds no readable data files.
        HoldoutInputError: a file is named `prompts*.jsonl`.
    """
    refuse_holdout_files([path])
    if path.is_file():
        files = [path]
    elif path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _LOCAL_SUFFIXES)
    else:
        raise DataSourceError(f"{path}: no such file or folder")
    refuse_holdout_files(files)
    builders = {_LOCAL_SUFFIXES.get(p.suffix) for p in files}
    if not files or None in builders or len(builders) != 1:
        raise DataSourceError(
            f"{path}: expected .jsonl, .json or .parquet file(s) of one kind "
            f"(or a save_to_disk folder), found {[p.name for p in files][:5]}"
        )
    return builders.pop(), files


def _offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE) or os.environ.get("HF_DATASETS_OFFLINE", "") in {
        "1",
        "true",
        "TRUE",
    }


def _load_local(name: str, path: Path) -> Any:
    import datasets

    if path.is_dir() and (path / "dataset_info.json").is_file() and (path / "state.json").is_file():
        loaded = datasets.load_from_disk(str(path))
        return loaded["train"] if isinstance(loaded, datasets.DatasetDict) else loaded
    builder, files = local_data_files(path)
    try:
        return datasets.load_dataset(builder, data_files=[str(p) for p in files], split="train")
    except Exception as err:  # datasets raises many types for unreadable files
        raise DataSourceError(f"source {name}: cannot read {path}: {err}") from err


def load_source(name: str, path: str | Path | None = None, *, cache_dir: str | None = None) -> Any:
    """Read source `name` as a `datasets.Dataset` of raw rows.

    Args:
        name: a registered source name.
        path: read this local file or folder instead of the source's default.
        cache_dir: `datasets` cache folder for Hub sources (default: the `datasets` default).

    Raises:
        DataSourceError: the source cannot be read; when offline and the Hub dataset is not
            cached, the message says so at once (no network wait) and how to use a local copy.
        HoldoutInputError: a local input file is named `prompts*.jsonl`.
    """
    source = get_source(name)
    if path is not None:
        return _load_local(name, Path(path))
    if source.resource is not None:
        return _load_local(name, resource_path(source.resource))
    if source.hf_id is None:
        default = Path(str(source.local_default))
        if not default.exists():
            raise DataSourceError(
                f"source {name} is a local synthetic set ({source.description}) and {default} does "
                f"not exist: build it (see the README) or point at it with --source {name}=PATH"
            )
        return _load_local(name, default)
    return _load_hub(source, cache_dir)


def _load_hub(source: Source, cache_dir: str | None) -> Any:
    import datasets

    hint = f"or point the source at a local copy with --source {source.name}=PATH"
    try:
        return datasets.load_dataset(
            source.hf_id, source.hf_config, split=source.split, cache_dir=cache_dir
        )
    except Exception as err:  # offline misses surface as several exception types
        if _offline():
            raise DataSourceError(
                f"source {source.name} ({source.origin}) is not in the local datasets cache and "
                f"HF_HUB_OFFLINE/HF_DATASETS_OFFLINE is set: download it on a connected machine "
                f"(datasets.load_dataset({source.hf_id!r})) {hint}"
            ) from err
        raise DataSourceError(
            f"source {source.name} ({source.origin}) failed to load: {err}; {hint}"
        ) from err
