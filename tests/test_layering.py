"""Every import inside rsi_hub follows DESIGN.md's dependency direction (no arrow runs up).

The table below is DESIGN.md's "Dependency direction" paragraph. An area is a sub-package or a
top-level module of rsi_hub; an import from one area into another must be listed, or go to a
leaf. Imports inside functions count too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "rsi_hub"

# Imported by anyone, importing no area (only each other): the package root (its version),
# errors, the run-directory contract, and small utilities.
UTILITY_LEAVES = {
    "rsi_hub", "errors", "rundir", "hashing", "staging", "batching", "resources", "crashpoint",
    "hubnet", "logs", "numbers", "shipped", "slurm", "distributed",
}  # fmt: skip
# Who may import whom (besides the utility leaves), from DESIGN.md.
ALLOWED: dict[str, set[str]] = {
    "checker": set(),
    "chat": set(),
    "suites": {"checker"},
    "data": {"chat", "suites"},
    # `rsi-hub tiny`'s checkpoint builder: the embedded default a recipe may start from.
    "tiny": {"chat", "suites"},
    "train": {"data", "chat", "checker", "suites", "tiny"},
    "synth": {"checker", "suites", "chat"},
    # `rsi-hub eval --revise K` scores serving's verify-and-revise loop.
    "evaluate": {"checker", "suites", "chat", "serving"},
    "serving": {"chat", "checker"},
    "release": {"chat", "evaluate"},
    "space_support": {"chat", "checker", "serving"},
    # Above train and evaluate, so also what they stand on.
    # `rsi-hub replicate` also runs synth (teacher, RFT sampling), tiny (the init) and release.
    "experiments": {
        "train",
        "evaluate",
        "data",
        "chat",
        "checker",
        "suites",
        "synth",
        "tiny",
        "release",
    },
}
# Thin layers over everything (the CLI, `rsi-hub demo`, `python -m rsi_hub`).
TOP = {"cli", "demo", "__main__"}


def _area(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "rsi_hub"


def _module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every absolute rsi_hub import, `from rsi_hub import x` resolved to x."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "rsi_hub":
                for alias in node.names:
                    is_module = (PACKAGE / alias.name).is_dir() or (
                        PACKAGE / f"{alias.name}.py"
                    ).is_file()
                    found.append((node.lineno, f"rsi_hub.{alias.name}" if is_module else "rsi_hub"))
            else:
                found.append((node.lineno, node.module))
    return [(line, name) for line, name in found if name.split(".")[0] == "rsi_hub"]


def upward_imports(package: Path = PACKAGE) -> list[str]:
    """Each import of `package` that DESIGN.md's direction does not allow, as `file:line a -> b`."""
    bad = []
    for path in sorted(package.rglob("*.py")):
        source = _area(_module_name(path, package))
        if source in TOP:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, name in _imported(tree):
            target = _area(name)
            if target == source or target in UTILITY_LEAVES:
                continue
            if source in UTILITY_LEAVES or target not in ALLOWED.get(source, set()):
                bad.append(f"{path.relative_to(package.parent)}:{line} {source} -> {target}")
    return bad


def test_every_area_is_in_the_table() -> None:
    areas = {_area(_module_name(p)) for p in PACKAGE.rglob("*.py")}
    unknown = areas - set(ALLOWED) - UTILITY_LEAVES - TOP
    assert not unknown, f"add {sorted(unknown)} to the table (from DESIGN.md) before using them"


def test_no_import_runs_up_the_dependency_direction() -> None:
    assert upward_imports() == []


def test_the_walker_finds_a_planted_upward_import(tmp_path: Path) -> None:
    # The test above would pass vacuously if the walker saw nothing: plant the old violation
    # (train reading synth's answer extraction) in a copy and expect it named.
    package = tmp_path / "rsi_hub"
    (package / "train").mkdir(parents=True)
    (package / "synth").mkdir()
    (package / "train" / "reward.py").write_text(
        "def score(text):\n    from rsi_hub.synth.extract import extract_final\n"
        "    return extract_final(text)\n"
    )
    (package / "synth" / "run.py").write_text("from rsi_hub import errors, hashing\n")
    assert upward_imports(package) == ["rsi_hub/train/reward.py:2 train -> synth"]


@pytest.mark.parametrize("module", ["rsi_hub.experiments.evalio", "rsi_hub.experiments.recipes"])
def test_experiments_import_plainly(module: str) -> None:
    # No `import_module("rsi_hub....")` strings: the walker (and readers) must see each arrow.
    path = PACKAGE.parent / (module.replace(".", "/") + ".py")
    assert "import_module" not in path.read_text(encoding="utf-8")
