"""`rsi-hub eval RUN --revise K`: verify-and-revise scored on a checked suite, as its own protocol.

Each document's prompt is answered in the served configuration (the same rendered prompt as
plain serving: k0, or none for IF263; greedy; stop ids 11 and 2), judged by the checker against
the document's checks, and asked again with the checker's reasons up to K answers in all
(`rsi_hub.serving.revise`); the best answer is scored. The results go to
`RUN/eval/<suite>.revise-<K>/` in the layout of every eval folder (samples in lm-eval's shape,
with the same `doc_hash` and `prompt_hash`, so `rsi-hub compare --revise K` pairs them with plain
serving), and meta.json says `served_configuration: false`, `extra.protocol:
"verify-and-revise"`: `compare`'s guards and release cards never take them for served numbers.

Tokens spent are recorded per document (every round) and in total, beside what the first round
alone (plain serving's answer) cost.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rsi_hub import hashing
from rsi_hub.chat import MAX_NEW_TOKENS, render, validate_model_folder
from rsi_hub.evaluate import harness, store
from rsi_hub.evaluate.aggregate import task_table
from rsi_hub.evaluate.config import EvalConfig
from rsi_hub.evaluate.protocol import REVISE_PROTOCOL, SUITES, served_generation
from rsi_hub.rundir import EvalMeta, library_versions


def revise_folder(suite: str, max_rounds: int) -> str:
    """Where `--revise K` results go under `RUN/eval/`: beside the served `<suite>/`."""
    return f"{suite}.revise-{max_rounds}"


def _hash(text: str) -> str:
    # lm-eval's `hash_string` (sha256 of the UTF-8 text), so hashes pair with its sample logs.
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _doc_hash(doc: dict[str, Any]) -> str:
    # How lm-eval's evaluator hashes a logged document (json.dumps, indent 2, not ASCII-escaped).
    return _hash(json.dumps(doc, indent=2, default=str, ensure_ascii=False))


def _metric_list() -> list[dict[str, str]]:
    """The IF metrics with the aggregations of `_if_template_yaml`, then revise's own."""
    from rsi_hub.checker import IF_TYPES

    return [
        {"metric": "acc", "aggregation": "mean"},
        {"metric": "pass_count", "aggregation": "total"},
        *({"metric": f"miss_{t}", "aggregation": "miss_rate"} for t in IF_TYPES),
        {"metric": "first_acc", "aggregation": "mean"},
        {"metric": "rounds", "aggregation": "mean"},
        {"metric": "completion_tokens", "aggregation": "mean"},
        {"metric": "first_completion_tokens", "aggregation": "mean"},
    ]


def evaluate_revise(config: EvalConfig, *, progress: Callable[[str], None] | None = None) -> Any:
    """Score verify-and-revise with up to `config.revise` answers per prompt on `config.suite`.

    Returns:
        The `SuiteOutcome` of `RUN/eval/<suite>.revise-<K>/`.

    Raises:
        RsiHubError: the run breaks the serving contract or the suite file is invalid.
    """
    from tqdm.auto import tqdm

    from rsi_hub.checker import CHECKER_VERSION, sandbox_backend
    from rsi_hub.evaluate.runner import SuiteOutcome, SystemPrompt
    from rsi_hub.serving import LocalGenerator, revise

    say = progress or (lambda _line: None)
    run, suite, rounds = Path(config.run), SUITES[config.suite], int(config.revise or 1)
    validate_model_folder(run)
    loaded = harness.load_suite_file(suite.name, config.suite_data)
    docs = loaded.rows[: config.limit] if config.limit else loaded.rows
    gen_limit = config.max_gen_toks or MAX_NEW_TOKENS
    say(f"hashing the weights of {run}")
    weight_files = hashing.weights_files_sha256(run)
    say(f"loading {run} (hf, in process)")
    generator = LocalGenerator.load(
        run,
        max_new_tokens=gen_limit,
        device=config.device,
        use_default_system_prompt=suite.system_prompt,
    )
    folder_name = revise_folder(suite.name, rounds)
    say(f"{suite.name}: verify-and-revise, up to {rounds} answers per prompt")
    started = time.monotonic()
    rows = []
    for doc_id, doc in enumerate(tqdm(docs, desc=f"{suite.name} revise-{rounds}", unit="prompt")):
        messages = [{"role": "user", "content": doc["prompt"]}]
        result = revise(generator, messages, doc["checks"], max_rounds=rounds)
        prompt = render(messages, use_default_system_prompt=suite.system_prompt)
        first = result.rounds[0]
        metrics = {
            **harness.if_metrics(result.best.verdict),
            "first_acc": 1.0 if first.verdict.passed else 0.0,
            "rounds": float(len(result.rounds)),
            "completion_tokens": float(result.completion_tokens),
            "first_completion_tokens": float(first.completion_tokens),
        }
        rows.append(
            {
                "doc_id": doc_id,
                "doc": doc,
                "target": "",
                "arguments": [[prompt, {"max_gen_toks": gen_limit, "max_rounds": rounds}]],
                "resps": [[r.answer for r in result.rounds]],
                "filtered_resps": [result.answer],
                "filter": "none",
                "metrics": list(metrics),
                "doc_hash": _doc_hash(doc),
                "prompt_hash": _hash(prompt),
                "target_hash": _hash(""),
                **metrics,
                "revise": result.to_json(),
            }
        )
    seconds = time.monotonic() - started
    tokens = _token_summary(rows)
    task = suite.tasks[0]
    results = {
        "results": {task: task_table(_metric_list(), rows, {"name": task, "alias": task})},
        "configs": {task: {"task": task, "metric_list": _metric_list()}},
        "n-samples": {task: {"original": len(loaded.rows), "effective": len(rows)}},
        "protocol": REVISE_PROTOCOL,
    }
    system = SystemPrompt.served(suite)
    meta = EvalMeta(
        suite=suite.name,
        tasks=list(suite.tasks),
        weights_sha256=hashing.manifest_sha256(weight_files),
        checker_version=CHECKER_VERSION,
        sandbox_backend=sandbox_backend(),
        system_prompt_id=system.id,
        system_prompt_sha256=system.sha256,
        generation={**served_generation(gen_limit), "max_rounds": rounds},
        served_configuration=False,
        limit=config.limit,
        n_samples={task: len(rows)},
        backend="hf",
        versions=library_versions(),
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        extra={
            "protocol": REVISE_PROTOCOL,
            "max_rounds": rounds,
            "tokens": tokens,
            "run": str(run.resolve()),
            "weights_files": weight_files,
            "data": {"source": str(loaded.path), "sha256": loaded.sha256},
            "seconds": round(seconds, 3),
        },
    )
    folder = store.write_suite_dir(run, folder_name, results, {task: rows}, meta)
    metrics = {task: store.read_suite_dir(run, folder_name).metrics(task)}
    say(format_tokens(tokens))
    say(f"{suite.name}: wrote {folder} ({seconds:.1f} s)")
    return SuiteOutcome(suite.name, folder, metrics, seconds)


def _token_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Tokens over every round vs the first round alone (what plain serving spends)."""
    n = max(len(rows), 1)
    revise_prompt = sum(r["revise"]["prompt_tokens"] for r in rows)
    revise_completion = sum(r["revise"]["completion_tokens"] for r in rows)
    plain_prompt = sum(r["revise"]["rounds"][0]["prompt_tokens"] for r in rows)
    plain_completion = sum(r["revise"]["rounds"][0]["completion_tokens"] for r in rows)
    return {
        "prompts": len(rows),
        "revise": {"prompt": revise_prompt, "completion": revise_completion},
        "plain": {"prompt": plain_prompt, "completion": plain_completion},
        "per_prompt": {
            "revise_completion": revise_completion / n,
            "plain_completion": plain_completion / n,
            "revise_prompt": revise_prompt / n,
            "plain_prompt": plain_prompt / n,
        },
        "completion_ratio": revise_completion / plain_completion if plain_completion else None,
    }


def format_tokens(tokens: dict[str, Any]) -> str:
    """One line: tokens generated and read by revise vs plain serving, in total and per prompt."""
    per = tokens["per_prompt"]
    ratio = tokens["completion_ratio"]
    shown = f"{ratio:.2f}x" if ratio is not None else "n/a"
    return (
        f"tokens: generated {tokens['revise']['completion']:,} with revise vs "
        f"{tokens['plain']['completion']:,} plain ({shown}; per prompt "
        f"{per['revise_completion']:.1f} vs {per['plain_completion']:.1f}); prompt tokens read "
        f"{tokens['revise']['prompt']:,} vs {tokens['plain']['prompt']:,}"
    )
