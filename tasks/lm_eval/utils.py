"""Functions the task YAMLs of this folder call (`!function utils.NAME`).

lm-eval imports this file by path, once per reference, so it keeps no state and no logic of its
own: everything lives in `rsi_hub.evaluate.harness` (rsi-hub must be installed: `pip install -e .`).
"""

from __future__ import annotations

from typing import Any

from rsi_hub.evaluate import harness

doc_to_text = harness.prompt_text
process_if = harness.process_if
process_ev4 = harness.process_ev4
process_pref = harness.process_pref
pref_choices = harness.pref_choices
total = harness.total
miss_rate = harness.miss_rate


def load_if818(**metadata: Any) -> Any:
    return harness.load_checked_suite("if818", **metadata)


def load_if263(**metadata: Any) -> Any:
    return harness.load_checked_suite("if263", **metadata)


def load_if3k(**metadata: Any) -> Any:
    return harness.load_checked_suite("if3k", **metadata)


def load_ev4(**metadata: Any) -> Any:
    return harness.load_checked_suite("ev4", **metadata)


def load_pref(**metadata: Any) -> Any:
    return harness.load_pref_pairs(**metadata)
