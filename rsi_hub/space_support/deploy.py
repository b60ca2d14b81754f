"""Deploying the Gradio Space: `space/` plus the parts of rsi_hub the app imports, one commit.

The Space repository gets `app.py`, `README.md` (Space front matter) and `requirements.txt` at
its root, and beside them `rsi_hub/` (only the sub-packages the app imports) with the serving
contract files `rsi_hub.chat` reads in `rsi_hub/resources/templates/`, where an installed
package has them. `MODEL_ID` is set as a Space variable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rsi_hub.errors import RsiHubError
from rsi_hub.shipped import package_root, resource_path

SPACE_FILES = ("app.py", "README.md", "requirements.txt")
# What `space/app.py` imports, directly or not; the rest of the package stays out of the Space.
PACKAGE_PARTS = (
    "__init__.py", "py.typed", "errors.py", "hashing.py", "logs.py", "numbers.py", "shipped.py",
    "crashpoint.py", "rundir", "chat", "checker", "serving", "space_support",
)  # fmt: skip


@dataclass(frozen=True)
class SpaceDeployment:
    """The files a deployment sends (path in the Space repository -> local file)."""

    space_id: str
    files: dict[str, Path]


def space_files() -> dict[str, Path]:
    """Every file of the Space, keyed by its path in the Space repository."""
    space = resource_path("space")
    missing = [n for n in SPACE_FILES if not (space / n).is_file()]
    if missing:
        raise RsiHubError(f"{space}: missing {', '.join(missing)}; reinstall rsi-hub.")
    files = {name: space / name for name in SPACE_FILES}
    package = package_root()
    for part in PACKAGE_PARTS:
        path = package / part
        sources = [path] if path.is_file() else sorted(path.rglob("*.py"))
        for source in sources:
            files[f"rsi_hub/{source.relative_to(package).as_posix()}"] = source
    for source in sorted(resource_path("templates").iterdir()):
        if source.is_file():
            files[f"rsi_hub/resources/templates/{source.name}"] = source
    return files


def deploy_space(
    space_id: str,
    *,
    model_id: str | None = None,
    private: bool = False,
    dry_run: bool = False,
    api: Any = None,
    log: Callable[[str], None] = print,
) -> SpaceDeployment:
    """Create (or update) a Gradio Space with the app, in one commit.

    Args:
        space_id: the Space repository, `ORG/NAME`.
        model_id: set the Space variable `MODEL_ID` (the app's default is the released model).
        private: create the Space private.
        dry_run: list what would be sent; contact no Hub.
        api: an `HfApi` (default: a new one; the token comes from HF_TOKEN or the login).
        log: receives one line per step.
    """
    from huggingface_hub import CommitOperationAdd, HfApi
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    from rsi_hub.hubnet import failure_reason, unreachable_errors

    files = space_files()
    deployment = SpaceDeployment(space_id, files)
    if dry_run:
        log(f"dry run: would create the Gradio Space {space_id} and send one commit with:")
        for path in files:
            log(f"  add {path}")
        return deployment
    api = api or HfApi()
    done = "nothing was deployed"  # what a failure leaves on the Hub (the commit is atomic)
    try:
        api.create_repo(
            space_id, repo_type="space", space_sdk="gradio", private=private, exist_ok=True
        )
        operations = [
            CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(f)) for p, f in files.items()
        ]
        info = api.create_commit(
            space_id,
            operations,
            repo_type="space",
            commit_message="Deploy the RSIAgent-Delta chat app",
        )
        done = f"the app was deployed ({info.commit_url}) but MODEL_ID was not set"
        if model_id:
            api.add_space_variable(space_id, "MODEL_ID", model_id)
    except OfflineModeIsEnabled as err:
        raise RsiHubError("HF_HUB_OFFLINE=1 is set: unset it to deploy the Space.") from err
    except (HfHubHTTPError, OSError, *unreachable_errors()) as err:
        raise RsiHubError(
            f"deploying the Space {space_id} failed: {failure_reason(err)}; {done}; run the "
            "command again."
        ) from err
    log(
        f"deployed {len(files)} files to https://huggingface.co/spaces/{space_id} ({info.commit_url})"
    )
    return deployment
