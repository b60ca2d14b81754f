"""Short human summaries of finished evaluations (what `rsi-hub eval` prints)."""

from __future__ import annotations

from typing import Any

from rsi_hub.evaluate.runner import SuiteOutcome

# The headline metrics of each task, in the order they are printed.
_HEADLINES: dict[str, tuple[str, ...]] = {
    "if818": ("pass_count", "acc"),
    "if263": ("pass_count", "acc"),
    "if3k": ("pass_count", "acc"),
    "ev4": ("checks_passed", "checks_total", "acc", "stop_rate", "answer_tokens"),
    "pref": ("acc_norm", "acc_norm_chars", "acc"),
    "mmlu": ("acc",),
}


def _shown(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def format_outcome(outcome: SuiteOutcome) -> str:
    """One line per headline task: `suite task: metric value, ...  -> folder`."""
    lines = []
    for task, names in _HEADLINES.items():
        metrics = outcome.metrics.get(task)
        if metrics is None:
            continue
        shown = ", ".join(f"{n} {_shown(metrics[n])}" for n in names if n in metrics)
        n = metrics.get("sample_len")
        lines.append(f"{outcome.suite}: {task}: {shown}" + (f" (n={n})" if n else ""))
    lines.append(f"{outcome.suite}: results in {outcome.folder}")
    return "\n".join(lines)
