"""Releasing a run: stage a Hub repository folder, validate it, push it in one atomic commit.

```python
from rsi_hub.release import release

staged = release("runs/demo/round0", name="nano", out="runs/release-nano")  # stage + validate, no push
release("runs/LA2b200s", push=True)  # ... then push to RSIArena/RSIAgent-Delta-Stage1 (private)
```

Uses the chat module (serving contract) and reads the evaluation results under `RUN/eval/`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rsi_hub.release.facts import Facts, facts_root, load_facts
from rsi_hub.release.manifest import MANIFEST_FILE, Manifest, read_manifest
from rsi_hub.release.push import PushPlan, PushResult, commit_operations, plan_push, push_release
from rsi_hub.release.stage import StagedRelease, stage_release
from rsi_hub.release.validate import release_problems, validate_release


@dataclass(frozen=True)
class ReleaseOutcome:
    """What `release` did: the staged folder, and the push when one was asked for."""

    staged: StagedRelease
    push: PushResult | None = None


def release(
    run: str | Path,
    *,
    name: str | None = None,
    out: str | Path | None = None,
    repo_id: str | None = None,
    push: bool = False,
    private: bool = True,
    create_pr: bool = False,
    force: bool = False,
    log: Callable[[str], None] = print,
) -> ReleaseOutcome:
    """Stage `run` as a release, validate it, and push it when `push` is true.

    Nothing is pushed unless validation passes. See `stage_release`, `validate_release` and
    `push_release` for the arguments.

    Raises:
        ReleaseError: any broken input or failed check; the message names the file and the fix.
    """
    staged = stage_release(run, name=name, out=out, repo_id=repo_id, force=force, log=log)
    validate_release(staged.folder, staged.facts, log=log)
    if not push:
        return ReleaseOutcome(staged)
    result = push_release(
        staged.folder,
        repo_id=staged.manifest.repo_id,
        private=private,
        create_pr=create_pr,
        log=log,
    )
    return ReleaseOutcome(staged, result)


def release_to_folder(
    run: str | Path, out: str | Path, *, name: str = "tiny", log: Callable[[str], None] = print
) -> Path:
    """Stage and validate `run` into `out` (the main job's "release to a local folder").

    Returns the folder, which `transformers.pipeline("text-generation", model=out)` loads.
    """
    return release(run, name=name, out=out, log=log).staged.folder


__all__ = [
    "MANIFEST_FILE",
    "Facts",
    "Manifest",
    "PushPlan",
    "PushResult",
    "ReleaseOutcome",
    "StagedRelease",
    "commit_operations",
    "facts_root",
    "load_facts",
    "plan_push",
    "push_release",
    "read_manifest",
    "release",
    "release_problems",
    "release_to_folder",
    "stage_release",
    "validate_release",
]
