"""Pushing a validated release to the Hub: one atomic commit, then a remote check of every file.

The push compares the remote repository with the manifest first and sends only what is missing
or different (and deletes files no longer part of the release), all in one `create_commit`:
either every file lands or none does. So re-running after an interruption finishes the job
without duplicates, and re-running after success sends nothing. The token is never handled
here: huggingface_hub reads it from `HF_TOKEN` or its login, and nothing prints it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rsi_hub.errors import ReleaseError
from rsi_hub.hubnet import failure_reason, unreachable_errors
from rsi_hub.release.manifest import (
    MANIFEST_FILE,
    FileEntry,
    Manifest,
    cached_sha256,
    git_blob_sha1,
    manifest_problems,
    read_manifest,
)

# Remote files that are the Hub's own and never part of a release's manifest.
HUB_OWNED = frozenset({".gitattributes"})
RETRY_HINT = (
    "nothing was committed unless the commit itself had completed; run the same command again "
    "to finish (only files missing or different on the Hub are sent)"
)
# What a failure at each step of the push has left on the Hub (the commit is atomic).
PUSHED_BY_STEP = {
    "prepare": "nothing was pushed",
    "commit": "the commit was being sent: it landed whole or not at all",
    "verify": "the commit landed, but checking the Hub's copy did not finish",
}


@dataclass(frozen=True)
class RemoteFile:
    """One file of the remote repository as the Hub lists it."""

    path: str
    size: int
    blob_id: str
    lfs_sha256: str | None = None


@dataclass(frozen=True)
class PushPlan:
    """What one commit must do to make the remote repository equal the staged release."""

    upload: list[str]
    delete: list[str]
    unchanged: list[str]

    @property
    def empty(self) -> bool:
        """Whether the remote already matches (no commit needed)."""
        return not self.upload and not self.delete


@dataclass(frozen=True)
class PushResult:
    """The outcome of a push."""

    repo_id: str
    revision: str
    plan: PushPlan
    commit_url: str | None = None
    pr_url: str | None = None
    verified: list[str] = field(default_factory=list)


def release_entries(folder: Path, manifest: Manifest) -> dict[str, FileEntry]:
    """Every file the remote must hold: the manifest's files and the manifest itself."""
    manifest_path = folder / MANIFEST_FILE
    digest = cached_sha256([manifest_path])[manifest_path]
    own = FileEntry(size=manifest_path.stat().st_size, sha256=digest)
    return {**manifest.files, MANIFEST_FILE: own}


def remote_files(api: Any, repo_id: str, revision: str | None) -> dict[str, RemoteFile]:
    """The files of `repo_id` at `revision` (empty when the revision does not exist yet)."""
    from huggingface_hub.errors import RevisionNotFoundError
    from huggingface_hub.hf_api import RepoFile

    try:
        entries = list(api.list_repo_tree(repo_id, recursive=True, revision=revision))
    except RevisionNotFoundError:
        return {}
    files = {}
    for entry in entries:
        if isinstance(entry, RepoFile):
            lfs = entry.lfs.sha256 if entry.lfs is not None else None
            files[entry.path] = RemoteFile(entry.path, entry.size, entry.blob_id, lfs)
    return files


def matches(local: Path, entry: FileEntry, remote: RemoteFile | None) -> bool:
    """Whether the remote file has the local file's exact content.

    Files in LFS are compared by sha256 (the Hub lists it); other files by their git blob id,
    computed locally, since the Hub lists no sha256 for them.
    """
    if remote is None or remote.size != entry.size:
        return False
    if remote.lfs_sha256 is not None:
        return remote.lfs_sha256 == entry.sha256
    return remote.blob_id == git_blob_sha1(local)


def plan_push(folder: str | Path, manifest: Manifest, remote: dict[str, RemoteFile]) -> PushPlan:
    """Which files to upload (missing or different remotely), delete (not in the release) or keep."""
    folder = Path(folder)
    entries = release_entries(folder, manifest)
    upload, unchanged = [], []
    for rel, entry in sorted(entries.items()):
        (unchanged if matches(folder / rel, entry, remote.get(rel)) else upload).append(rel)
    delete = sorted(p for p in remote if p not in entries and p not in HUB_OWNED)
    return PushPlan(upload=upload, delete=delete, unchanged=unchanged)


def commit_operations(folder: str | Path, plan: PushPlan) -> list[Any]:
    """The `CommitOperation`s of one commit that carries out `plan`."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    folder = Path(folder)
    adds = [
        CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(folder / rel))
        for rel in plan.upload
    ]
    deletes = [CommitOperationDelete(path_in_repo=rel) for rel in plan.delete]
    return adds + deletes


def commit_title(manifest: Manifest) -> str:
    """The commit (and pull request) title: the same for the same release, so a re-run finds it."""
    return f"Release {manifest.name} (weights sha256 {manifest.weights_sha256[:12]})"


def verify_remote(
    folder: str | Path, manifest: Manifest, remote: dict[str, RemoteFile]
) -> list[str]:
    """Every release file that the remote lacks or holds with another size or hash."""
    folder = Path(folder)
    problems = []
    for rel, entry in sorted(release_entries(folder, manifest).items()):
        found = remote.get(rel)
        if found is None:
            problems.append(f"{rel}: missing on the Hub")
        elif not matches(folder / rel, entry, found):
            problems.append(
                f"{rel}: on the Hub size {found.size} / "
                f"{'sha256 ' + found.lfs_sha256[:12] if found.lfs_sha256 else 'blob ' + found.blob_id[:12]}"
                f", staged size {entry.size} / sha256 {entry.sha256[:12]}"
            )
    return problems


def _open_release_pr(api: Any, repo_id: str, title: str) -> int | None:
    for discussion in api.get_repo_discussions(
        repo_id, discussion_type="pull_request", discussion_status="open"
    ):
        if discussion.title == title:
            return discussion.num
    return None


def push_failure(folder: Path, repo_id: str, err: BaseException, step: str) -> str:
    """One line: which push failed, why, what is on the Hub now (`step`), and what to do."""
    return (
        f"pushing {folder} to {repo_id} failed: {failure_reason(err)}; {PUSHED_BY_STEP[step]}; "
        "run the same command again when the Hub is reachable: it sends only files missing or "
        "different there, then checks every file."
    )


def make_api() -> Any:
    """The `HfApi` the push uses; it takes the token from `HF_TOKEN` or the saved login."""
    from huggingface_hub import HfApi

    return HfApi()


def push_release(
    folder: str | Path,
    *,
    repo_id: str | None = None,
    private: bool = True,
    create_pr: bool = False,
    api: Any = None,
    log: Callable[[str], None] = print,
) -> PushResult:
    """Push a staged, validated release to the Hub and check every remote file against it.

    Args:
        folder: the staged release (`validate_release` must have passed on it).
        repo_id: the target repository (default: the manifest's).
        private: create the repository private (an existing one keeps its visibility).
        create_pr: commit to a pull request instead of `main` (re-runs reuse the open one).
        api: an `HfApi` (default: `make_api()`).
        log: receives one line per step.

    Raises:
        ReleaseError: a staged file changed since staging (hashed again, byte for byte), no
            token, offline mode, a Hub error or an unreachable Hub (one line saying what was
            pushed), or a remote file that does not match after the push (each with what to do
            next).
    """
    from huggingface_hub import get_token
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    folder = Path(folder)
    manifest = read_manifest(folder)
    repo_id = repo_id or manifest.repo_id
    # Byte for byte, not through the digest cache: an edit that restored the mtime would pass it.
    changed = manifest_problems(folder, manifest, fresh=True)
    if changed:
        raise ReleaseError(
            f"{folder} no longer matches its {MANIFEST_FILE} (nothing was pushed):\n  - "
            + "\n  - ".join(changed)
        )
    if get_token() is None:
        raise ReleaseError(
            "no Hugging Face token: log in with `hf auth login` or set HF_TOKEN in the environment "
            f"(never on the command line); {folder} is staged and validated, nothing was pushed."
        )
    api = api or make_api()
    title = commit_title(manifest)
    step = "prepare"
    try:
        url = api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
        log(f"repository {url} ready ({'private' if private else 'public'} when created)")
        pr_num = _open_release_pr(api, repo_id, title) if create_pr else None
        revision = f"refs/pr/{pr_num}" if pr_num is not None else None
        plan = plan_push(folder, manifest, remote_files(api, repo_id, revision))
        log(
            f"to send: {len(plan.upload)} file(s), delete {len(plan.delete)}, "
            f"already there: {len(plan.unchanged)}"
        )
        commit_url = pr_url = None
        if not plan.empty:
            step = "commit"
            info = api.create_commit(
                repo_id,
                commit_operations(folder, plan),
                commit_message=title,
                commit_description=f"Staged by rsi-hub from release facts {manifest.name}.",
                revision=revision,
                create_pr=create_pr and revision is None,
            )
            step = "verify"
            commit_url, pr_url = info.commit_url, info.pr_url
            if create_pr and info.pr_num is not None:
                revision = f"refs/pr/{info.pr_num}"
            log(f"committed: {commit_url}" + (f" (pull request {pr_url})" if pr_url else ""))
        problems = verify_remote(folder, manifest, remote_files(api, repo_id, revision))
    except OfflineModeIsEnabled as err:
        raise ReleaseError(
            "HF_HUB_OFFLINE=1 is set, so huggingface_hub refuses every request to the Hub; unset "
            f"it to push. {folder} is staged and validated; nothing was pushed."
        ) from err
    except (HfHubHTTPError, OSError, *unreachable_errors()) as err:
        raise ReleaseError(push_failure(folder, repo_id, err, step)) from err
    if problems:
        raise ReleaseError(
            f"after the push, the Hub copy of {repo_id} does not match {folder}:\n  - "
            + "\n  - ".join(problems)
            + f"\n{RETRY_HINT}."
        )
    verified = sorted(release_entries(folder, manifest))
    log(f"verified {len(verified)} file(s) on the Hub against {MANIFEST_FILE} (size and sha256)")
    return PushResult(repo_id, revision or "main", plan, commit_url, pr_url, verified)
