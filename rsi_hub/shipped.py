"""The one way to find the files rsi-hub ships beside its code: `resource_path(name)`.

The top-level folders `templates/`, `tasks/lm_eval/`, `release/`, `launch/` and `space/` are
the source (the design names them). `rsi_hub/resources/` holds relative symlinks to them, so:

- in a checkout (editable install, or `PYTHONPATH=.`) the package reads the folders themselves,
  and an edit to a template is live;
- `python -m build` follows the links and copies the files into the wheel under
  `rsi_hub/resources/`, so `pip install rsi-hub` works with no checkout at all.

Nothing in rsi_hub computes the checkout's location from `__file__` (tests/test_shipped.py
enforces it); everything goes through `importlib.resources` here.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from rsi_hub.errors import ShippedFileMissingError

# The shipped folders, by the name `resource_path` takes -> their source folder in a checkout.
SHIPPED_FOLDERS: dict[str, str] = {
    "templates": "templates",
    "lm_eval": "tasks/lm_eval",
    "release": "release",
    "launch": "launch",
    "space": "space",
}


def package_root() -> Path:
    """The folder of the imported `rsi_hub` package (its code, and `resources/` inside it)."""
    # `files("rsi_hub")` is a real directory for a regular package installed from a wheel or a
    # checkout (rsi-hub is never imported from a zip), so `Path` is safe here.
    return Path(str(resources.files("rsi_hub")))


def resource_path(name: str) -> Path:
    """The path of a file or folder shipped in `rsi_hub/resources/`.

    Args:
        name: one of `SHIPPED_FOLDERS` (`"templates"`, `"lm_eval"`, `"release"`, `"launch"`,
            `"space"`) or a data file of that folder (`"demo_sft.jsonl"`, `"tiny_corpus.txt"`).

    Raises:
        ShippedFileMissingError: the installation lacks it, naming the path and the fix.
    """
    path = package_root() / "resources" / name
    if not path.exists():
        source = SHIPPED_FOLDERS.get(name)
        hint = (
            f"in a checkout, rsi_hub/resources/{name} must be a symlink to ../../{source} "
            "(clone with symlinks enabled: git config core.symlinks true)"
            if source
            else "it is one of the package's data files"
        )
        raise ShippedFileMissingError(
            f"{path}: missing; {hint}. Reinstall rsi-hub (`pip install --force-reinstall "
            "rsi-hub`, or `pip install -e .` in a full clone).",
            path=path,
        )
    return path


def shipped_file(relative: str | Path) -> Path:
    """A shipped file named by its path in a checkout: `launch/slurm_train.sbatch` or
    `tasks/lm_eval/if818.yaml` -> its installed path (what recipes and docs write).

    Raises:
        ShippedFileMissingError: the path is not under a shipped folder, or is not installed.
    """
    relative = Path(relative)
    for name, source in SHIPPED_FOLDERS.items():
        if relative.is_relative_to(source):
            path = resource_path(name) / relative.relative_to(source)
            if not path.exists():
                raise ShippedFileMissingError(
                    f"{path}: missing (shipped as {relative}).", path=path
                )
            return path
    raise ShippedFileMissingError(
        f"{relative}: not a shipped file; shipped folders are {', '.join(SHIPPED_FOLDERS.values())}.",
        path=relative,
    )
