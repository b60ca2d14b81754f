"""`rsi-hub eval`: score a run directory on the suites through lm-eval's Python API.

The served configuration is fixed here, not left to flags: chat template applied, k0 (or no
system message for IF263), greedy, `<|im_end|>` as the only stop string, 2,048 new tokens,
thinking off. One model load serves every suite; each suite is its own lm-eval run because the
system-prompt switch is a run-wide chat-template argument.

A candidate system prompt (`system_prompt=`, for `rsi-hub prompt-search`) replaces that system
message and nothing else; its results go to `RUN/eval/<suite>.prompt-<id>/`, beside the served
ones, and meta.json marks them `served_configuration: false`, so that neither `compare`'s guards
nor a release card ever take them for the served model's scores.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rsi_hub import hashing
from rsi_hub.chat import (
    MAX_INPUT_TOKENS,
    MAX_NEW_TOKENS,
    load_system_prompt,
    render,
    validate_model_folder,
)
from rsi_hub.chat.serving import not_a_model_folder
from rsi_hub.distributed import is_main_process, under_launcher, use_cpu_processes_without_gpu
from rsi_hub.errors import EvaluationError, EvaluationFileError, EvaluationInputError, RsiHubError
from rsi_hub.evaluate import harness, hub, store
from rsi_hub.evaluate.config import PROMPT_ID, EvalConfig
from rsi_hub.evaluate.endpoint import (
    endpoint_model_args,
    make_endpoint_lm,
    normalise_endpoint,
    resolve_model_id,
)
from rsi_hub.evaluate.protocol import (
    PREF_DATASET,
    SUITES,
    Suite,
    resolve_suites,
    served_generation,
)
from rsi_hub.rundir import EvalMeta, library_versions

DEFAULT_HF_BATCH_SIZE = 8
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SystemPrompt:
    """The system message of one evaluation: the protocol's (k0 or none) or a candidate's.

    Attributes:
        id: the prompt id recorded in meta.json (k0, a candidate's id, or None for none).
        text: the system message; None (or empty) for no system message.
        candidate: True for a candidate prompt (not the served configuration).
    """

    id: str | None
    text: str | None
    candidate: bool = False

    @classmethod
    def served(cls, suite: Suite) -> SystemPrompt:
        """The protocol's system message of `suite`: k0, or none for IF263."""
        return cls(suite.system_prompt_id, load_system_prompt() if suite.system_prompt else None)

    @property
    def sha256(self) -> str | None:
        """sha256 of the system message text (UTF-8); None when there is no system message."""
        if not self.text:
            return None
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def candidate_folder(suite: str, system_prompt_id: str) -> str:
    """Where a candidate prompt's results go under `RUN/eval/`: beside the served `<suite>/`."""
    return f"{suite}.prompt-{system_prompt_id}"


@dataclass(frozen=True)
class SuiteOutcome:
    """What `evaluate_run` wrote for one suite."""

    suite: str
    folder: Path
    metrics: dict[str, dict[str, Any]]  # task -> metric -> value
    seconds: float


def hf_model_args(
    run: str | Path,
    *,
    batch_size: int | None,
    device: str | None,
    max_gen_toks: int,
) -> dict[str, Any]:
    """Arguments of rsi-hub's lm-eval HF model for a run directory."""
    import torch

    return {
        "pretrained": str(run),
        "dtype": "auto",  # the checkpoint's own dtype: BF16 for the 30B model
        "device": device or ("cuda" if torch.cuda.is_available() else "cpu"),
        "batch_size": batch_size or DEFAULT_HF_BATCH_SIZE,
        # Prompts up to the served 8,192 input tokens plus the answer; lm-eval would otherwise
        # take the config's position limit and left-truncate long prompts silently.
        "max_length": MAX_INPUT_TOKENS + max_gen_toks,
        "enable_thinking": False,
        "chat_template_args": {"use_default_system_prompt": True},
        "trust_remote_code": False,
    }


def vllm_model_args(
    run: str | Path,
    *,
    tensor_parallel_size: int = 1,
    data_parallel_size: int = 1,
    batch_size: int | None = None,
    max_gen_toks: int = MAX_NEW_TOKENS,
    gpu_memory_utilization: float = 0.9,
) -> dict[str, Any]:
    """Arguments of lm-eval's vLLM model for a run directory (GPU machines).

    vLLM reads the stop ids from `generation_config.json`; lm-eval sends temperature 0 (greedy)
    and the `<|im_end|>` stop string per request. `data_parallel_size` > 1 runs independent
    replicas through Ray, each on `tensor_parallel_size` GPUs.
    """
    return {
        "pretrained": str(run),
        "dtype": "auto",
        "tensor_parallel_size": tensor_parallel_size,
        "data_parallel_size": data_parallel_size,
        "max_model_len": MAX_INPUT_TOKENS + max_gen_toks,
        "max_gen_toks": max_gen_toks,
        "gpu_memory_utilization": gpu_memory_utilization,
        "batch_size": batch_size or "auto",  # vLLM schedules its own continuous batches
        "enable_thinking": False,
        "chat_template_args": {"use_default_system_prompt": True},
        "trust_remote_code": False,
        "seed": 0,
    }


def _build_lm(backend: str, model_args: dict[str, Any]) -> Any:
    if backend == "endpoint":
        return make_endpoint_lm(**model_args)
    if backend == "hf":
        from rsi_hub.evaluate.models import RsiHFLM

        return RsiHFLM(**model_args)
    if backend == "vllm":
        from importlib.util import find_spec

        if find_spec("vllm") is None:
            raise EvaluationError(
                "--backend vllm needs vLLM on a GPU machine: pip install 'lm-eval[vllm]'.",
                field="backend",
            )
        from rsi_hub.evaluate.models import make_vllm_lm

        return make_vllm_lm(**model_args)
    raise EvaluationInputError(f"unknown backend {backend!r}; choose hf or vllm.", field="backend")


def _set_system_prompt(lm: Any, suite: Suite, system: SystemPrompt) -> None:
    # The template inserts k0 unless told otherwise; the switch is run-wide in lm-eval. A
    # candidate's text comes as lm-eval's system instruction (an explicit system message), so
    # the default is off: a lost instruction would then show as a prompt off-protocol.
    lm.chat_template_args = {
        **lm.chat_template_args,
        "use_default_system_prompt": suite.system_prompt and not system.candidate,
    }


def _expected_context(
    doc: dict[str, Any], suite: Suite, system: SystemPrompt | None, chat_messages: bool = False
) -> str:
    messages = []
    if system is not None and system.candidate:
        if system.text:
            messages.append({"role": "system", "content": system.text})
        messages.append({"role": "user", "content": doc["prompt"]})
        default_system = False
    else:
        if doc.get("system"):
            messages.append({"role": "system", "content": doc["system"]})
        messages.append({"role": "user", "content": doc["prompt"]})
        default_system = suite.system_prompt
    if chat_messages:
        # An endpoint gets the messages; its chat template adds k0 (the parity tests prove it).
        return json.dumps(messages, ensure_ascii=False)
    return render(messages, use_default_system_prompt=default_system)


def check_rendered_prompts(
    suite: Suite,
    samples: dict[str, list[dict[str, Any]]],
    system: SystemPrompt | None = None,
    *,
    chat_messages: bool = False,
) -> None:
    """Check that lm-eval rendered every prompt exactly as the serving contract does.

    Guards the system-prompt protocol (k0 or none, or the candidate prompt `system`) and the
    chat template; MMLU is lm-eval's own task and is not checked. With `chat_messages` (an
    endpoint) the context is the JSON list of messages sent, without k0 (the server adds it).

    Raises:
        RsiHubError: naming the task, the document and the first difference.
    """
    if suite.name == "mmlu":
        return
    for task, rows in samples.items():
        for row in rows:
            expected = _expected_context(row["doc"], suite, system, chat_messages)
            for argument in row["arguments"]:
                context = argument[0]
                if chat_messages and isinstance(context, (list, tuple)):
                    context = context[0]  # lm-eval's JsonChatStr: (the messages as JSON,)
                if context != expected:
                    raise EvaluationError(
                        f"{task} document {row['doc_id']}: lm-eval rendered the prompt "
                        f"differently from the serving contract ({_label(suite, system)} "
                        f"system message expected):\n{context[:300]!r}\nexpected\n"
                        f"{expected[:300]!r}"
                    )


def _label(suite: Suite, system: SystemPrompt | None) -> str:
    if system is not None and system.candidate:
        return f"candidate {system.id}" if system.text else f"no (candidate {system.id})"
    return suite.system_prompt_id or "no"


def _task_versions(results: dict[str, Any]) -> dict[str, Any]:
    return dict(results.get("versions", {}))


def _data_source(suite: Suite, folder: str | Path | None, pref_data: str | None) -> dict[str, Any]:
    """Where the documents came from, with the file's sha256 when it is a file."""
    if suite.name == "mmlu":
        return {"source": "lm-eval task mmlu (Hub dataset cais/mmlu)"}
    if suite.name == "pref":
        if pref_data is None:
            return {"source": f"{PREF_DATASET} split test_prefs"}
        path = Path(pref_data)
        return {
            "source": pref_data,
            **({"sha256": hashing.sha256_file(path)} if path.is_file() else {}),
        }
    loaded = harness.load_suite_file(suite.name, folder)
    return {"source": str(loaded.path), "sha256": loaded.sha256}


def _pref_source(pref_data: str | Path | None) -> str | None:
    """`--pref-data` as lm-eval's task will receive it: absolute for files, else as given."""
    if pref_data is None:
        return None
    path = Path(pref_data)
    return str(path.resolve()) if path.exists() else str(pref_data)


@contextmanager
def _environment_info_once() -> Iterator[None]:
    """Let lm-eval collect its environment report once per process, not once per suite.

    `simple_evaluate` adds torch's `collect_env` report to every results dict, which spawns
    subprocesses and costs about a second each time; within one process it cannot change, so
    every suite after the first gets a copy of the first report.
    """
    import lm_eval.evaluator as evaluator

    original = getattr(evaluator, "add_env_info", None)
    if original is None:  # another lm-eval version: leave it alone
        yield
        return

    def add_env_info(results: dict[str, Any]) -> None:
        if not _ENV_INFO:
            probe: dict[str, Any] = {}
            original(probe)
            _ENV_INFO.update(probe)
        results.update(copy.deepcopy(_ENV_INFO))

    evaluator.add_env_info = add_env_info
    try:
        yield
    finally:
        evaluator.add_env_info = original


_ENV_INFO: dict[str, Any] = {}


def _checker_version() -> str:
    from rsi_hub.checker import CHECKER_VERSION

    return CHECKER_VERSION


def evaluate_run(
    config: EvalConfig, *, progress: Callable[[str], None] | None = None
) -> list[SuiteOutcome]:
    """Score a run directory on one suite (or `all`) and write `RUN/eval/<suite>/` for each.

    Args:
        config: the run and the options (see `EvalConfig`), among them:
            `suite`: if818, if263, if3k, ev4, pref, mmlu, all (if818, if263, ev4, pref, mmlu),
            or a comma-separated list; the model is loaded once for all of them.
            `limit`: score only the first N documents of each task (a smoke test; `compare`
            pairs only what both runs scored, and the acceptance guards ignore limited runs).
            `pref_data`: score PREF on these pairs instead of the Hub's held-out test_prefs.
            `suite_data`: read `prompts_<suite>.jsonl` from this folder instead of the shipped
            `tasks/lm_eval/data/` (a private or patched copy of a suite).
            `max_gen_toks`: NOT the served configuration; only for tests and benchmarks on the
            tiny checkpoint. Recorded in meta.json, which then says `served_configuration: false`.
            `system_prompt` / `system_prompt_file` and `system_prompt_id`: a candidate system
            message used instead of the protocol's (k0); empty means no system message. NOT the
            served configuration: the results go to `RUN/eval/<suite>.prompt-<id>/` and
            meta.json records `served_configuration: false`, the id and `system_prompt_sha256`.
            IF263's protocol has no system message: it is scored with the candidate only when
            named in `suite` itself (`if263`, `if818,if263`); `all` leaves it out.
            `revise`: score verify-and-revise with up to K answers per prompt instead (its own
            protocol, `RUN/eval/<suite>.revise-<K>/`; see `rsi_hub.evaluate.revise_eval`).
            `folder_name`: the result folder under `RUN/eval/` instead of
            `<suite>.prompt-<id>`; one suite only, and only with a candidate prompt.
        progress: called with one line per step (the CLI prints them).

    Returns:
        One `SuiteOutcome` per suite, in order.

    Raises:
        RsiHubError: the run breaks the serving contract, a Hub dataset is unreachable (raised
            before the model is loaded), or lm-eval rendered a prompt off-protocol.
    """
    if config.revise is not None:  # its own protocol, in its own folder
        from rsi_hub.evaluate.revise_eval import evaluate_revise

        return [evaluate_revise(config, progress=progress)]
    if config.num_processes > 1 and not under_launcher():  # relaunch as N processes
        from rsi_hub.evaluate.parallel import launch_data_parallel

        return launch_data_parallel(config, progress=progress)
    if under_launcher():  # one of several ranks: without CUDA they need a gloo group
        use_cpu_processes_without_gpu()
    run = Path(config.run)
    suite, limit, backend = config.suite, config.limit, config.backend
    pref_data, suite_data, max_gen_toks = config.pref_data, config.suite_data, config.max_gen_toks
    say = progress or (lambda _line: None)
    suites = resolve_suites(suite)
    candidate = _candidate_prompt(config)
    if candidate is not None:
        named = {part.strip() for part in suite.split(",")}
        for item in [s for s in suites if not s.system_prompt and s.name not in named]:
            say(f"{item.name}: left out (its protocol has no system message; name it to score it)")
            suites.remove(item)
    folders = _result_folders(suites, candidate, config.folder_name)
    endpoint = None if config.endpoint is None else normalise_endpoint(config.endpoint)
    if endpoint is not None:
        loglikelihood = [s.name for s in suites if not s.generates]
        if loglikelihood:
            raise EvaluationInputError(
                f"--endpoint scores generation suites only; {', '.join(loglikelihood)} need "
                "log-likelihoods, which chat completions do not return: score them without "
                "--endpoint.",
                field="suite",
            )
    # With an endpoint, RUN may be only where results go; a model folder there is the run the
    # caller says the endpoint serves, and only then are its weights hashed into meta.json.
    names_served_run = endpoint is None or not_a_model_folder(run) is None
    if names_served_run:
        validate_model_folder(run)
    elif any(s.name == "ev4" for s in suites):
        raise EvaluationInputError(
            f"{run}: ev4 counts answer tokens with the served run's tokenizer; pass the run "
            "the endpoint serves as RUN (its model folder) to score ev4 through --endpoint.",
            field="suite",
        )
    pref_source = _pref_source(pref_data)
    # Before the model loads: a missing dataset must cost seconds, not a model load. Every
    # missing one is named at once, so that `--suite all` needs one retry, not several.
    if suite_data is not None and not Path(suite_data).is_dir():
        raise EvaluationFileError(
            f"{suite_data}: no such folder of suite files", path=suite_data, field="suite_data"
        )
    problems = []
    sources: dict[str, dict[str, Any]] = {}
    for item in suites:
        try:
            if item.name == "pref" and pref_source is not None:
                from rsi_hub.suites import load_pref

                load_pref(pref_source)  # opens the source now
            elif item.hub_dataset:
                hub.ensure_hub_dataset(item.hub_dataset, item.name)
            sources[item.name] = _data_source(item, suite_data, pref_source)  # validates files
        except RsiHubError as err:
            problems.append(str(err))
    if problems:
        raise EvaluationError("\n".join(problems))
    gen_limit = max_gen_toks or MAX_NEW_TOKENS
    checker_version = _checker_version()
    endpoint_info: dict[str, Any] | None = None
    if endpoint is not None:
        model_id = resolve_model_id(endpoint, config.endpoint_model)  # fails fast when down
        endpoint_info = {"url": endpoint, "model_id": model_id, "serves_run": names_served_run}

    weights: str | None = None
    weight_files: dict[str, str] = {}
    if names_served_run and is_main_process():  # only rank 0 writes meta.json
        say(f"hashing the weights of {run}")
        weight_files = hashing.weights_files_sha256(run)
        weights = hashing.manifest_sha256(weight_files)

    if endpoint_info is not None:
        backend = "endpoint"
        model_args = endpoint_model_args(endpoint_info["url"], model_id, max_gen_toks=gen_limit)
    elif backend == "hf":
        model_args = hf_model_args(
            run, batch_size=config.batch_size, device=config.device, max_gen_toks=gen_limit
        )
    else:
        model_args = vllm_model_args(
            run,
            tensor_parallel_size=config.tensor_parallel_size,
            data_parallel_size=config.data_parallel_size,
            batch_size=config.batch_size,
            max_gen_toks=gen_limit,
        )
    say(f"loading {endpoint or run} ({backend})")
    lm = _build_lm(backend, model_args)

    outcomes = []
    for item in suites:
        outcomes.append(
            _run_suite(
                lm,
                run,
                item,
                limit=limit,
                backend=backend,
                model_args=model_args,
                pref_data=pref_source,
                suite_data=suite_data,
                data_source=sources[item.name],
                max_gen_toks=max_gen_toks,
                weights=weights,
                weight_files=weight_files,
                checker_version=checker_version,
                endpoint=endpoint_info,
                system=candidate or SystemPrompt.served(item),
                folder_name=folders[item.name],
                num_processes=config.num_processes,
                say=say,
            )
        )
    return outcomes


def _stop_measurement(suite: Suite, endpoint: dict[str, Any] | None) -> str | None:
    """How EV4's stop facts were measured: from token ids in process, re-tokenised otherwise."""
    if suite.name != "ev4":
        return None
    return "re-tokenised answers" if endpoint is not None else "generated token ids"


def _candidate_prompt(config: EvalConfig) -> SystemPrompt | None:
    """The candidate system prompt of `config` (its text read now); None for the protocol's."""
    text = config.candidate_text()
    if text is None:
        return None
    return SystemPrompt(config.system_prompt_id, text, candidate=True)


def _result_folders(
    suites: list[Suite], candidate: SystemPrompt | None, folder_name: str | None
) -> dict[str, str]:
    """The folder under `RUN/eval/` of each suite: its name, or beside it for a candidate."""
    if folder_name is None:
        if candidate is None:
            return {s.name: s.name for s in suites}
        return {s.name: candidate_folder(s.name, str(candidate.id)) for s in suites}
    if candidate is None:
        raise EvaluationInputError(
            "folder_name is for candidate system prompts only; served results always go to "
            "RUN/eval/<suite>/.",
            field="folder_name",
        )
    if len(suites) != 1:
        raise EvaluationInputError(
            "folder_name takes one suite; pass one suite, not a list or all.", field="folder_name"
        )
    if folder_name in SUITES or folder_name.startswith(".") or not PROMPT_ID.fullmatch(folder_name):
        raise EvaluationInputError(
            f"folder_name {folder_name!r}: a candidate's results must not replace a suite's own "
            "folder; use <suite>.prompt-<id>.",
            field="folder_name",
        )
    return {suites[0].name: folder_name}


def _run_suite(
    lm: Any,
    run: Path,
    suite: Suite,
    *,
    limit: int | None,
    backend: str,
    model_args: dict[str, Any],
    pref_data: str | None,
    suite_data: str | Path | None,
    data_source: dict[str, Any],
    max_gen_toks: int | None,
    weights: str | None,
    weight_files: dict[str, str],
    checker_version: str,
    endpoint: dict[str, Any] | None,
    system: SystemPrompt,
    folder_name: str,
    say: Callable[[str], None],
    num_processes: int = 1,
) -> SuiteOutcome:
    import lm_eval
    from lm_eval.tasks import TaskManager

    from rsi_hub.checker import sandbox_backend

    metadata: dict[str, Any] = {"pretrained": str(run)}
    if max_gen_toks is not None:
        metadata["max_gen_toks"] = max_gen_toks
    if pref_data is not None:
        metadata["pref_data"] = pref_data
    if suite_data is not None:
        metadata["suite_dir"] = str(Path(suite_data).resolve())
    # lm-eval's built-in tasks take seconds to index: only MMLU needs them.
    task_manager = TaskManager(
        include_path=str(harness.tasks_dir()),
        include_defaults=suite.hub_dataset == "cais/mmlu",
        metadata=metadata,
    )
    _set_system_prompt(lm, suite, system)
    shown = f"{suite.name} with system prompt {system.id}" if system.candidate else suite.name
    say(f"{shown}: running lm-eval ({', '.join(suite.tasks)})")
    started = time.monotonic()
    with _environment_info_once():
        results = lm_eval.simple_evaluate(
            model=lm,
            tasks=list(suite.tasks),
            task_manager=task_manager,
            limit=limit,
            apply_chat_template=True,
            log_samples=True,
            gen_kwargs={"max_gen_toks": max_gen_toks} if max_gen_toks is not None else None,
            system_instruction=system.text if system.candidate and system.text else None,
            confirm_run_unsafe_code=False,
        )
    seconds = time.monotonic() - started
    # Requests each data-parallel rank ran (the same on every rank); one process: [all].
    counts = lm.take_request_counts() if hasattr(lm, "take_request_counts") else None
    if results is None or not is_main_process():  # another rank of a data-parallel run
        return SuiteOutcome(suite.name, store.suite_dir(run, folder_name), {}, seconds)
    samples = results.pop("samples")
    check_rendered_prompts(suite, samples, system, chat_messages=endpoint is not None)

    generation = served_generation(max_gen_toks or MAX_NEW_TOKENS)
    # A generation override cannot change a log-likelihood suite; a candidate prompt changes all.
    served = not system.candidate and (
        not suite.generates or max_gen_toks in (None, MAX_NEW_TOKENS)
    )
    meta = EvalMeta(
        suite=suite.name,
        tasks=list(suite.tasks),
        weights_sha256=weights,
        checker_version=checker_version,
        sandbox_backend=sandbox_backend(),  # which sandbox ran code_tests (bwrap/fallback)
        system_prompt_id=system.id,
        system_prompt_sha256=system.sha256,
        generation=generation if suite.generates else {"apply_chat_template": True},
        served_configuration=served,
        limit=limit,
        n_samples={task: len(rows) for task, rows in samples.items()},
        backend=backend,
        versions=library_versions(),
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        extra={
            "task_versions": _task_versions(results),
            "run": str(run.resolve()),
            "weights_files": weight_files,
            "model_args": {**model_args, "chat_template_args": dict(lm.chat_template_args)},
            "data": data_source,
            "stop_measurement": _stop_measurement(suite, endpoint),
            "endpoint": endpoint,
            # Data-parallel ranks (hf) and how lm-eval's requests were split; results do not
            # depend on either.
            "data_parallel": {"num_processes": num_processes, "requests_per_rank": counts},
            "seconds": round(seconds, 3),
        },
    )
    folder = store.write_suite_dir(run, folder_name, results, samples, meta)
    record = store.read_suite_dir(run, folder_name)
    metrics = {task: record.metrics(task) for task in record.results.get("results", {})}
    say(f"{suite.name}: wrote {folder} ({seconds:.1f} s)")
    return SuiteOutcome(suite.name, folder, metrics, seconds)
