"""The lm-eval task folder: every task is indexed and loads (lm-eval skips a broken YAML
silently), and each carries the served configuration and the checker's types."""

from __future__ import annotations

from pathlib import Path

import lm_eval
import pytest
import yaml
from lm_eval.tasks import TaskManager

from rsi_hub.checker import CHECKER_VERSION, EV4_TYPES, IF_TYPES
from rsi_hub.evaluate.harness import tasks_dir

TASKS = ("if818", "if263", "if3k", "ev4", "pref")
GENERATION_TASKS = ("if818", "if263", "if3k", "ev4")


@pytest.fixture(scope="module")
def manager() -> TaskManager:
    return TaskManager(
        include_path=str(tasks_dir()),
        include_defaults=False,
        metadata={"pref_data": "pref_demo"},
    )


@pytest.fixture(scope="module")
def loaded(manager: TaskManager) -> dict:
    return manager.load(list(TASKS))["tasks"]


def test_every_task_and_the_group_is_indexed(manager: TaskManager) -> None:
    for name in (*TASKS, "rsi_suite"):
        assert name in manager.all_tasks, f"{name} not indexed: its YAML is broken"
    assert "rsi_suite" in manager.all_groups
    yaml_files = {p.stem for p in tasks_dir().glob("*.yaml")}
    assert yaml_files == {*TASKS, "rsi_suite"}


def test_every_task_loads_with_documents(loaded: dict) -> None:
    assert set(loaded) == set(TASKS)
    for name, task in loaded.items():
        docs = list(task.eval_docs)
        assert docs, f"{name} has no documents"
        assert task.doc_to_text(docs[0]), f"{name} renders an empty prompt"


def test_group_holds_the_card_suites_and_lm_evals_mmlu() -> None:
    group = yaml.safe_load((tasks_dir() / "rsi_suite.yaml").read_text())
    assert group["task"] == ["if818", "if263", "ev4", "pref", "mmlu"]
    # MMLU is lm-eval's own group (indexing all built-in tasks takes seconds; read its YAML).
    mmlu = Path(lm_eval.__file__).parent / "tasks" / "mmlu" / "default" / "_mmlu.yaml"
    assert yaml.safe_load(mmlu.read_text())["group"] == "mmlu"


@pytest.mark.parametrize("name", GENERATION_TASKS)
def test_served_generation_settings(loaded: dict, name: str) -> None:
    config = loaded[name].config
    kwargs = config.generation_kwargs
    assert kwargs["until"] == ["<|im_end|>"], "only <|im_end|>; never lm-eval's default \\n\\n"
    assert kwargs["max_gen_toks"] == 2048
    assert kwargs["do_sample"] is False and kwargs["temperature"] == 0.0
    assert config.num_fewshot == 0
    assert not config.description, "a description would replace the k0 default system message"


@pytest.mark.parametrize("name", ("if818", "if263", "if3k", "ev4"))
def test_checker_version_is_pinned(loaded: dict, name: str) -> None:
    metadata = loaded[name].config.metadata
    assert metadata["checker_version"] == CHECKER_VERSION, (
        f"the checker's semantics changed: bump `version` and set `checker_version` in "
        f"{name}.yaml (and _if_template_yaml's users)"
    )
    assert metadata["version"] >= 1.0


@pytest.mark.parametrize("name", ("if818", "if263", "if3k", "ev4"))
def test_miss_metrics_cover_the_checker_types(loaded: dict, name: str) -> None:
    declared = {
        m["metric"].removeprefix("miss_")
        for m in loaded[name].config.metric_list
        if m["metric"].startswith("miss_")
    }
    expected = set(IF_TYPES) | (set(EV4_TYPES) if name == "ev4" else set())
    assert declared == expected


def test_suite_types_are_declared(loaded: dict) -> None:
    # Every type a suite uses has a declared miss_ metric (else lm-eval falls back with a warning).
    for name in ("if818", "if263", "if3k", "ev4"):
        task = loaded[name]
        declared = {m["metric"] for m in task.config.metric_list}
        used = {f"miss_{c['type']}" for doc in task.eval_docs for c in doc["checks"]}
        assert used <= declared, f"{name}: undeclared {sorted(used - declared)}"


def test_pref_is_two_continuations_of_the_chat_prompt(loaded: dict) -> None:
    task = loaded["pref"]
    doc = next(iter(task.eval_docs))
    assert task.OUTPUT_TYPE == "multiple_choice"
    assert task.doc_to_choice(doc) == [doc["chosen"], doc["rejected"]]
    assert task.doc_to_target(doc) == 0 and task.config.target_delimiter == ""
