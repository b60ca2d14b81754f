"""The shipped files (templates, lm-eval tasks, release facts, launch files, the Space) are found
through `rsi_hub.shipped` only, never by computing the checkout from `__file__`; and every
third-party package rsi_hub imports is declared in pyproject.toml.

The wheel itself (a non-editable install in a plain venv) is exercised by scripts/wheel_smoke.sh.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from rsi_hub.errors import ShippedFileMissingError
from rsi_hub.shipped import SHIPPED_FOLDERS, package_root, resource_path, shipped_file
from rsi_hub.train.launch import launch_config_path
from rsi_hub.train.recipes import load_recipe

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "rsi_hub"

# `x.parents[2]`, `x.parent.parent`: how a module reaches the checkout around the package.
CHECKOUT_FROM_FILE = re.compile(r"\.parents\s*\[|\.parent\s*\.\s*parent\b")


def test_no_module_computes_the_checkout_from_its_own_path() -> None:
    offenders = [
        f"{path.relative_to(REPO)}:{lineno}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if CHECKOUT_FROM_FILE.search(line)
    ]
    assert offenders == [], "use rsi_hub.shipped.resource_path instead:\n" + "\n".join(offenders)


def test_resources_links_are_relative_and_name_the_source_folders() -> None:
    links = {p.name: os.readlink(p) for p in (PACKAGE / "resources").iterdir() if p.is_symlink()}
    assert links == {name: f"../../{source}" for name, source in SHIPPED_FOLDERS.items()}


@pytest.mark.parametrize("name", sorted(SHIPPED_FOLDERS))
def test_resource_path_is_the_source_folder_in_a_checkout(name: str) -> None:
    path = resource_path(name)
    assert path == package_root() / "resources" / name
    assert path.resolve() == (REPO / SHIPPED_FOLDERS[name]).resolve()
    assert sorted(p.name for p in path.iterdir()) == sorted(
        p.name for p in (REPO / SHIPPED_FOLDERS[name]).iterdir()
    )


def test_resource_path_finds_the_demo_data_files() -> None:
    assert (
        resource_path("tiny_corpus.txt").read_bytes()
        == (PACKAGE / "resources" / "tiny_corpus.txt").read_bytes()
    )


def test_missing_resource_names_the_path_and_the_fix() -> None:
    with pytest.raises(ShippedFileMissingError) as info:
        resource_path("nothing_here")
    assert isinstance(info.value, FileNotFoundError)
    message = str(info.value)
    assert str(package_root() / "resources" / "nothing_here") in message
    assert "pip install --force-reinstall rsi-hub" in message


def test_shipped_file_maps_checkout_paths_into_the_package() -> None:
    assert shipped_file("launch/slurm_train.sbatch") == (
        resource_path("launch") / "slurm_train.sbatch"
    )
    assert shipped_file("tasks/lm_eval/data/SHA256SUMS") == (
        resource_path("lm_eval") / "data" / "SHA256SUMS"
    )
    with pytest.raises(ShippedFileMissingError, match="not a shipped file"):
        shipped_file("README.md")
    with pytest.raises(ShippedFileMissingError, match="missing"):
        shipped_file("launch/nope.yaml")


def test_launch_config_resolves_outside_the_checkout(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    recipe = load_recipe("LA2b200s", trainer="sft")
    assert recipe.launch_config == "launch/accelerate_fsdp2_4gpu.yaml"
    assert launch_config_path(recipe) == resource_path("launch") / "accelerate_fsdp2_4gpu.yaml"


def test_tasks_path_prints_the_task_folder_from_any_folder(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "rsi_hub", "tasks-path"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{resource_path('lm_eval')}\n"
    assert (Path(done.stdout.strip()) / "if818.yaml").is_file()


# vLLM is installed by hand on GPU machines (it pins its own torch build; see pyproject.toml).
NOT_DECLARED = {"vllm"}


def _normalise(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


def _declared() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        requirements += extra
    return {_normalise(re.split(r"[\s\[<>=!~;]", r, maxsplit=1)[0]) for r in requirements}


def _third_party_imports() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in {"rsi_hub", "__future__"}:
                    found.setdefault(top, str(path.relative_to(REPO)))
    return found


def test_every_third_party_import_is_declared() -> None:
    distributions = metadata.packages_distributions()
    declared = _declared()
    undeclared = [
        f"{module} (imported by {where}; distribution {distributions.get(module)})"
        for module, where in sorted(_third_party_imports().items())
        if module not in NOT_DECLARED
        and not any(_normalise(d) in declared for d in distributions.get(module, []))
    ]
    assert undeclared == [], "declare in pyproject.toml (core or an extra):\n" + "\n".join(
        undeclared
    )
