"""Sharded synthesis: `--shard I/N` slices and `rsi-hub synth merge`, with the reference teacher
on the real generation pool (deterministic, no model), against the unsharded run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rsi_hub.cli import main
from rsi_hub.errors import SynthFileError, SynthInputError
from rsi_hub.rundir import SynthProvenance
from rsi_hub.synth import SynthConfig, merge, synthesize
from rsi_hub.synth.backends import REFERENCE_MODEL
from rsi_hub.synth.shards import Shard

LIMIT = 8
SHARDS = 3


def _run(out: Path, shard: str | None = None, **kwargs: object) -> SynthProvenance:
    settings = {"k": 1, "limit": LIMIT, **kwargs}
    return synthesize(
        SynthConfig(mode="rft", model=REFERENCE_MODEL, out=out, backend="reference",
                    shard=shard, **settings)  # type: ignore[arg-type]
    )  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The unsharded run `full` and its three shards `shard-I`."""
    root = tmp_path_factory.mktemp("shards")
    _run(root / "full")
    for index in range(SHARDS):
        _run(root / f"shard-{index}", f"{index}/{SHARDS}")
    return root


def _shard_dirs(root: Path) -> list[str]:
    return [str(root / f"shard-{i}") for i in range(SHARDS)]


def test_shards_are_disjoint_round_robin_slices_of_the_selection(runs: Path) -> None:
    whole = SynthProvenance.read(runs / "full").prompt_ids
    assert whole is not None and len(whole) == LIMIT
    slices = [SynthProvenance.read(runs / f"shard-{i}").prompt_ids for i in range(SHARDS)]
    assert slices == [whole[0::3], whole[1::3], whole[2::3]]
    assert [len(s) for s in slices] == [3, 3, 2]
    ids = [i for s in slices for i in s]
    assert len(set(ids)) == len(ids) == LIMIT  # disjoint, and together the whole selection
    shard = json.loads((runs / "shard-2" / "run.json").read_text())["shard"]
    assert (shard["index"], shard["count"], shard["pool_prompts"]) == (2, 3, LIMIT)
    assert SynthProvenance.read(runs / "shard-2").extra["shard"] == shard


def test_merge_rebuilds_the_unsharded_run_and_is_idempotent(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "merged"
    # Shards given in any order.
    assert main(["synth", "merge", *reversed(_shard_dirs(runs)), "--out", str(out)]) == 0
    for name in ("data.jsonl", "ledger.jsonl", "run.json"):
        assert (out / name).read_bytes() == (runs / "full" / name).read_bytes(), name
    merged, whole = SynthProvenance.read(out), SynthProvenance.read(runs / "full")
    assert (merged.prompt_ids, merged.data_sha256, merged.rows_kept, merged.stats) == (
        whole.prompt_ids, whole.data_sha256, whole.rows_kept, whole.stats,
    )  # fmt: skip
    assert merged.audit_passed and merged.audit["rows_checked"] == LIMIT
    assert [m["shard"] for m in merged.extra["merged_from"]] == ["0/3", "1/3", "2/3"]
    assert sorted(p.name for p in out.iterdir()) == [
        "data.jsonl", "ledger.jsonl", "provenance.json", "run.json",
    ]  # fmt: skip
    rows = [json.loads(line) for line in (out / "data.jsonl").read_text().splitlines()]
    assert len({(r["prompt_id"], r["sample"]) for r in rows}) == len(rows) == LIMIT

    def files() -> dict[str, tuple[int, int, bytes]]:
        return {
            p.name: (p.stat().st_ino, p.stat().st_mtime_ns, p.read_bytes()) for p in out.iterdir()
        }

    first = files()
    capsys.readouterr()
    assert main(["synth", "merge", *_shard_dirs(runs), "--out", str(out)]) == 0
    assert files() == first  # merged again: the folder is left as it was, not rewritten
    assert "merged 3 shards: kept 8/8 samples from 8 prompts" in capsys.readouterr().out


def test_merge_refuses_shards_of_another_command(runs: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-1"
    _run(other, f"1/{SHARDS}", seed=7)  # same slice, other sampling seed
    dirs = _shard_dirs(runs)
    with pytest.raises(SynthInputError, match=r"shards of different runs \(run.json differs in "
                       r"sampling\)") as err:  # fmt: skip
        merge([dirs[0], str(other), dirs[2]], tmp_path / "m")
    assert err.value.field == "sampling"
    assert not (tmp_path / "m").exists()
    two = tmp_path / "two-0"
    _run(two, "0/2")
    with pytest.raises(SynthInputError, match=r"differs in shard.count"):
        merge([str(two), *dirs[1:]], tmp_path / "m")


def test_merge_refuses_a_missing_repeated_unfinished_or_overlapping_shard(
    runs: Path, tmp_path: Path
) -> None:
    dirs = _shard_dirs(runs)
    out = str(tmp_path / "m")
    with pytest.raises(SynthInputError, match=r"shards 0..2 once each: missing \[1\]"):
        merge([dirs[0], dirs[2]], out)
    with pytest.raises(SynthInputError, match=r"missing \[1\]; given twice \[2\]"):
        merge([dirs[0], dirs[2], dirs[2]], out)
    with pytest.raises(SynthInputError, match="it is an unsharded run, not a shard"):
        merge([str(runs / "full"), *dirs], out)
    unfinished = tmp_path / "shard-1"
    shutil.copytree(dirs[1], unfinished)
    (unfinished / "provenance.json").unlink()
    with pytest.raises(SynthFileError, match="shard 1 has not finished"):
        merge([dirs[0], str(unfinished), dirs[2]], out)
    # A row of shard 0 planted into shard 1: the shards overlap.
    overlapping = tmp_path / "overlap-1"
    shutil.copytree(dirs[1], overlapping)
    row = (Path(dirs[0]) / "data.jsonl").read_text().splitlines()[0]
    with (overlapping / "data.jsonl").open("a") as f:
        f.write(row + "\n")
    with pytest.raises(SynthInputError, match="the shards overlap"):
        merge([dirs[0], str(overlapping), dirs[2]], out)
    assert not Path(out).exists()
    with pytest.raises(SynthFileError, match="holds files that are not an earlier merge"):
        merge(dirs, runs / "full")  # never over a folder that is not a merge


@pytest.mark.parametrize("text", ["3/3", "1", "-1/3", "a/b", "0/0"])
def test_a_bad_shard_is_refused_with_the_form_to_use(text: str) -> None:
    with pytest.raises(SynthInputError, match=r"--shard .*(I/N|0\.\.N-1)") as err:
        Shard.parse(text)
    assert err.value.field == "shard"


def test_an_empty_shard_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SynthInputError, match="only 2 prompts, so this shard is empty"):
        _run(tmp_path / "s", "2/3", limit=2)
