"""The push: the exact commit it sends, re-runs, pull requests, verification, the token, offline.

Tests never reach the Hub: `FakeHub` stands in for `HfApi`, keeping files in memory and listing
them as the Hub does (LFS files with their sha256, others with their git blob id). One live test
runs only when HF_TOKEN and RSI_HUB_LIVE_REPO are set.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from huggingface_hub import CommitOperationAdd, CommitOperationDelete
from huggingface_hub.hf_api import RepoFile

from rsi_hub.cli import main
from rsi_hub.errors import ReleaseError
from rsi_hub.release import push as push_module
from rsi_hub.release import push_release, read_manifest, stage_release
from rsi_hub.release.manifest import MANIFEST_FILE

TOKEN = "hf_rsiHubTestSecretToken1234567890abcdef"
LFS_MIN_SIZE = 10_000  # the fake stores larger files "in LFS", as the Hub does binary/large ones


def _git_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class FakeHub:
    """An in-memory stand-in for `HfApi` that records every call."""

    def __init__(self) -> None:
        self.branches: dict[str, dict[str, bytes]] = {}
        self.prs: list[SimpleNamespace] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.fail_next_commit: Exception | None = None
        self.corrupt_on_commit: str | None = None

    def create_repo(self, repo_id: str, **kwargs: Any) -> str:
        self.calls.append(("create_repo", {"repo_id": repo_id, **kwargs}))
        self.branches.setdefault("main", {".gitattributes": b"*.safetensors filter=lfs\n"})
        return f"https://huggingface.co/{repo_id}"

    def get_repo_discussions(self, repo_id: str, **kwargs: Any):
        self.calls.append(("get_repo_discussions", kwargs))
        return iter(self.prs)

    def list_repo_tree(
        self, repo_id: str, *, recursive: bool, revision: str | None = None, **kw: Any
    ):
        from huggingface_hub.errors import RevisionNotFoundError

        self.calls.append(("list_repo_tree", {"revision": revision, **kw}))
        if (revision or "main") not in self.branches:
            raise RevisionNotFoundError("no such revision", response=None)
        for path, data in sorted(self.branches[revision or "main"].items()):
            lfs = None
            if len(data) >= LFS_MIN_SIZE:
                lfs = {
                    "size": len(data),
                    "oid": hashlib.sha256(data).hexdigest(),
                    "pointerSize": 134,
                }
            yield RepoFile(path=path, size=len(data), oid=_git_sha1(data), lfs=lfs)

    def create_commit(self, repo_id: str, operations: list, **kwargs: Any) -> SimpleNamespace:
        operations = list(operations)
        self.calls.append(("create_commit", {"operations": operations, **kwargs}))
        if self.fail_next_commit is not None:
            error, self.fail_next_commit = self.fail_next_commit, None
            raise error  # before anything is applied: the commit is atomic
        base = kwargs.get("revision") or "main"
        files = dict(self.branches[base])
        for op in operations:
            if isinstance(op, CommitOperationAdd):
                data = Path(op.path_or_fileobj).read_bytes()
                if op.path_in_repo == self.corrupt_on_commit:
                    data = data[:-1] + bytes([data[-1] ^ 1])
                files[op.path_in_repo] = data
            else:
                files.pop(op.path_in_repo)
        pr_num = pr_url = None
        if kwargs.get("create_pr"):
            pr_num = len(self.prs) + 1
            pr_url = f"https://huggingface.co/{repo_id}/discussions/{pr_num}"
            self.prs.append(SimpleNamespace(title=kwargs["commit_message"], num=pr_num))
            base = f"refs/pr/{pr_num}"
        self.branches[base] = files
        return SimpleNamespace(
            commit_url=f"https://hf.co/{repo_id}/commit/x", pr_url=pr_url, pr_num=pr_num
        )

    def commits(self) -> list[dict[str, Any]]:
        return [kwargs for name, kwargs in self.calls if name == "create_commit"]


def quiet(_: str) -> None:
    pass


@pytest.fixture
def staged(tiny_run: Path, tmp_path: Path) -> Path:
    return stage_release(tiny_run, name="tiny", out=tmp_path / "staged", log=quiet).folder


@pytest.fixture
def token(monkeypatch) -> str:
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    return TOKEN


def _paths(operations: list, kind: type) -> list[str]:
    return sorted(op.path_in_repo for op in operations if isinstance(op, kind))


def test_first_push_sends_every_file_in_one_commit(staged: Path, token: str) -> None:
    hub = FakeHub()
    result = push_release(staged, api=hub, log=quiet)
    manifest = read_manifest(staged)
    create_repo = hub.calls[0]
    assert create_repo == (
        "create_repo",
        {
            "repo_id": "RSIArena/RSIAgent-Delta-tiny",
            "repo_type": "model",
            "private": True,
            "exist_ok": True,
        },
    )
    (commit,) = hub.commits()
    assert _paths(commit["operations"], CommitOperationAdd) == sorted(
        [*manifest.files, MANIFEST_FILE]
    )
    assert _paths(commit["operations"], CommitOperationDelete) == []
    assert commit["create_pr"] is False and commit["revision"] is None
    assert (
        commit["commit_message"] == f"Release tiny (weights sha256 {manifest.weights_sha256[:12]})"
    )
    assert all("token" not in kwargs for _, kwargs in hub.calls)  # huggingface_hub finds it itself
    assert result.verified == sorted([*manifest.files, MANIFEST_FILE])
    assert hub.branches["main"]["model.safetensors"] == (staged / "model.safetensors").read_bytes()


def test_re_push_after_success_sends_nothing(staged: Path, token: str) -> None:
    hub = FakeHub()
    push_release(staged, api=hub, log=quiet)
    result = push_release(staged, api=hub, log=quiet)
    assert len(hub.commits()) == 1
    assert result.plan.empty and result.commit_url is None


def test_interrupted_push_is_finished_by_a_re_run(staged: Path, token: str) -> None:
    hub = FakeHub()
    hub.fail_next_commit = ConnectionError("connection reset by peer")
    with pytest.raises(ReleaseError, match="run the same command again"):
        push_release(staged, api=hub, log=quiet)
    assert set(hub.branches["main"]) == {".gitattributes"}  # nothing half-committed
    push_release(staged, api=hub, log=quiet)
    assert set(hub.branches["main"]) == {
        ".gitattributes",
        MANIFEST_FILE,
        *read_manifest(staged).files,
    }


def test_only_missing_or_different_files_are_sent_and_stale_ones_deleted(
    staged: Path, token: str
) -> None:
    hub = FakeHub()
    hub.create_repo("RSIArena/RSIAgent-Delta-tiny")
    hub.branches["main"].update(
        {
            "model.safetensors": (staged / "model.safetensors").read_bytes(),  # already there
            "config.json": (staged / "config.json").read_bytes(),
            "README.md": b"an older card\n",  # different
            "model-00001-of-00002.safetensors": b"old shard",  # no longer part of the release
        }
    )
    result = push_release(staged, api=hub, log=quiet)
    (commit,) = hub.commits()
    everything = sorted([*read_manifest(staged).files, MANIFEST_FILE])
    sent = [p for p in everything if p not in ("model.safetensors", "config.json")]
    assert _paths(commit["operations"], CommitOperationAdd) == sent
    assert _paths(commit["operations"], CommitOperationDelete) == [
        "model-00001-of-00002.safetensors"
    ]
    assert result.plan.unchanged == ["config.json", "model.safetensors"]


def test_create_pr_then_re_run_reuses_the_open_pull_request(staged: Path, token: str) -> None:
    hub = FakeHub()
    first = push_release(staged, api=hub, create_pr=True, log=quiet)
    assert first.revision == "refs/pr/1" and first.pr_url.endswith("/discussions/1")
    assert set(hub.branches["main"]) == {".gitattributes"}  # main untouched
    (commit,) = hub.commits()
    assert commit["create_pr"] is True
    second = push_release(staged, api=hub, create_pr=True, log=quiet)
    assert second.revision == "refs/pr/1" and second.plan.empty
    assert len(hub.commits()) == 1 and len(hub.prs) == 1


def test_remote_mismatch_after_push_is_an_error(staged: Path, token: str) -> None:
    hub = FakeHub()
    hub.corrupt_on_commit = "model.safetensors"
    with pytest.raises(ReleaseError, match=r"model.safetensors: on the Hub size \d+ / sha256"):
        push_release(staged, api=hub, log=quiet)


def test_no_token_is_a_clear_error(staged: Path, monkeypatch) -> None:
    monkeypatch.setattr("huggingface_hub.get_token", lambda: None)
    hub = FakeHub()
    with pytest.raises(ReleaseError, match="hf auth login"):
        push_release(staged, api=hub, log=quiet)
    assert hub.calls == []


def test_token_never_appears_in_output_logs_or_files(
    tiny_run: Path, tmp_path: Path, token: str, monkeypatch, capsys, caplog
) -> None:
    hub = FakeHub()
    monkeypatch.setattr(push_module, "make_api", lambda: hub)
    caplog.set_level(logging.DEBUG)
    run = Path(shutil.copytree(tiny_run, tmp_path / "run"))
    assert main(["release", str(run), "--name", "tiny", "--push", "--public"]) == 0
    captured = capsys.readouterr()
    assert "released tiny to https://huggingface.co/RSIArena/RSIAgent-Delta-tiny" in captured.out
    assert hub.calls[0][1]["private"] is False
    assert TOKEN not in captured.out + captured.err + caplog.text
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path
    assert all(TOKEN.encode() not in data for data in hub.branches["main"].values())


def test_offline_mode_stops_the_push_with_a_clear_error(tiny_run: Path, tmp_path: Path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_TOKEN": TOKEN}
    command = [sys.executable, "-m", "rsi_hub", "release", str(tiny_run), "--name", "tiny"]
    command += ["--out", str(tmp_path / "staged"), "--push"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "HF_HUB_OFFLINE=1 is set" in done.stderr
    assert "nothing was pushed" in done.stderr
    assert TOKEN not in done.stdout + done.stderr


@pytest.mark.live
@pytest.mark.skipif(
    not (os.environ.get("HF_TOKEN") and os.environ.get("RSI_HUB_LIVE_REPO")),
    reason="live Hub test: set HF_TOKEN and RSI_HUB_LIVE_REPO (a scratch repository) to run it",
)
def test_live_push_to_a_private_repository(staged: Path) -> None:
    from huggingface_hub import constants

    assert not constants.HF_HUB_OFFLINE, "run the live test with HF_HUB_OFFLINE=0"
    repo_id = os.environ["RSI_HUB_LIVE_REPO"]
    first = push_release(staged, repo_id=repo_id, log=quiet)
    assert first.verified
    again = push_release(staged, repo_id=repo_id, log=quiet)
    assert again.plan.empty
