"""Evaluation: lm-eval tasks for the card's suites, `rsi-hub eval`, `compare` and `failures`.

Public API (imported lazily, so that lm-eval's task files can import `harness` cheaply):

- `evaluate_run(EvalConfig(run, suite, ...))`: score a run; writes `RUN/eval/<suite>/`
  (results.json, samples_<task>.jsonl, meta.json). See `rsi_hub.evaluate.store` for the layout.
- `read_suite_dir(run, suite)`: read a finished evaluation back (metrics, samples, meta).
- `compare_runs(run_a, run_b, task=...)`: paired McNemar, bootstrap CI, acceptance rule.
- `failure_report(run, task=...)`: the card's section 5 table from the logged samples.
- `weights_sha256(folder)`: the digest every result is bound to (defined in `rsi_hub.hashing`).

- `rescore_suite(run, suite)`: re-judge logged answers with the current checker (`rsi-hub rescore`).
- `evaluate_revise(config)`: verify-and-revise as its own protocol (`rsi-hub eval --revise K`).

Uses `rsi_hub.checker`, `rsi_hub.suites`, `rsi_hub.chat`, `rsi_hub.serving` (verify-and-revise)
and the leaf `rsi_hub.hashing` only.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "EvalConfig": "rsi_hub.evaluate.config",
    "evaluate_run": "rsi_hub.evaluate.runner",
    "SuiteOutcome": "rsi_hub.evaluate.runner",
    "format_outcome": "rsi_hub.evaluate.report",
    "read_suite_dir": "rsi_hub.evaluate.store",
    "suite_dir": "rsi_hub.evaluate.store",
    "compare_runs": "rsi_hub.evaluate.compare",
    "AcceptanceRule": "rsi_hub.evaluate.compare",
    "Comparison": "rsi_hub.evaluate.compare",
    "failure_report": "rsi_hub.evaluate.failures",
    "rescore_suite": "rsi_hub.evaluate.rescore",
    "evaluate_revise": "rsi_hub.evaluate.revise_eval",
    "weights_sha256": "rsi_hub.hashing",
    "weights_files_sha256": "rsi_hub.hashing",
    "SUITES": "rsi_hub.evaluate.protocol",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'rsi_hub.evaluate' has no attribute {name!r}")
