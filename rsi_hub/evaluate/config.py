"""`EvalConfig`: every option of `rsi-hub eval` / `evaluate_run`, with its default and help.

The CLI's options are generated from these fields (`rsi_hub.cli.dataclass_args`); the served
configuration itself (template, k0, greedy, stops, 2,048 tokens) is fixed by the runner and is
not an option.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from rsi_hub.errors import EvaluationFileError, EvaluationInputError
from rsi_hub.evaluate.protocol import SUITE_CHOICES

Backend = Literal["hf", "vllm"]
#: The suites `--revise` can score: their answers are judged by the checker alone.
REVISABLE_SUITES = ("if818", "if263", "if3k")
# A candidate id becomes part of a folder name: RUN/eval/<suite>.prompt-<id>/.
PROMPT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass
class EvalConfig:
    """What `evaluate_run` scores and how; validated on construction (`EvaluationInputError`)."""

    run: str | Path = field(
        metadata={"positional": True, "metavar": "RUN", "help": "run directory to score"}
    )
    suite: str = field(
        default="if818",
        metadata={
            "metavar": "SUITE",
            "help": f"{', '.join(SUITE_CHOICES)}, or several comma-separated (one model load)",
        },
    )
    limit: int | None = field(
        default=None,
        metadata={
            "metavar": "N",
            "help": "score only the first N documents of each task (smoke tests; guards ignore it)",
        },
    )
    backend: Backend = field(
        default="hf",
        metadata={"help": "hf: transformers on CPU or GPU; vllm: lm-eval's vLLM model on GPUs"},
    )
    endpoint: str | None = field(
        default=None,
        metadata={
            "metavar": "URL",
            "help": "score a running OpenAI-compatible server (e.g. `rsi-hub serve RUN`'s "
            "http://127.0.0.1:8000/v1) through lm-eval's local-chat-completions model instead "
            "of loading RUN; generation suites only. Results go to RUN/eval/<suite>/ with "
            "backend endpoint; the weights sha256 is recorded only when RUN is the model "
            "folder the server serves",
        },
    )
    endpoint_model: str | None = field(
        default=None,
        metadata={
            "metavar": "ID",
            "help": "the model id to request from --endpoint (default: the one it serves)",
        },
    )
    batch_size: int | None = field(
        default=None, metadata={"metavar": "B", "help": "batch size (hf default 8)"}
    )
    device: str | None = field(
        default=None, metadata={"help": "hf device (default cuda if available)"}
    )
    tensor_parallel_size: int = field(
        default=1, metadata={"metavar": "TP", "help": "vllm: GPUs per replica"}
    )
    data_parallel_size: int = field(default=1, metadata={"metavar": "DP", "help": "vllm: replicas"})
    num_processes: int = field(
        default=1,
        metadata={
            "metavar": "N",
            "help": "hf: score data-parallel on N processes under `accelerate launch` (one per "
            "GPU; gloo CPU processes without one), each generating for every N-th request; "
            "rank 0 writes the one RUN/eval/<suite>/ folder, identical per document to one "
            "process",
        },
    )
    pref_data: str | None = field(
        default=None,
        metadata={
            "metavar": "SOURCE",
            "help": "score PREF on other pairs: a JSONL file, pref_demo (the shipped offline "
            "demo) or a Hub dataset id (default: HuggingFaceH4/ultrafeedback_binarized "
            "test_prefs)",
        },
    )
    system_prompt_file: str | None = field(
        default=None,
        metadata={
            "metavar": "FILE",
            "help": "a candidate system prompt (the file's text, surrounding white space "
            "removed; an empty file means no system message) used instead of k0. NOT the served "
            "configuration: writes RUN/eval/<suite>.prompt-<ID>/, meta.json records the id and "
            "sha256. IF263 (no system message by protocol) gets it only when named in --suite",
        },
    )
    system_prompt_id: str | None = field(
        default=None,
        metadata={
            "metavar": "ID",
            "help": "the candidate's id, in meta.json and the folder name (default: the file's "
            "stem)",
        },
    )
    revise: int | None = field(
        default=None,
        metadata={
            "metavar": "K",
            "help": "score verify-and-revise instead of plain serving: up to K answers per "
            "prompt, each judged by the checker, failures asked again with its reasons, the "
            "best answer kept (rsi_hub.serving.revise). Its own protocol, NOT the served "
            "configuration: writes RUN/eval/<suite>.revise-<K>/ (meta served_configuration "
            "false) with the tokens spent; IF suites, hf backend only",
        },
    )
    # Library-only options (prompt search, tests and benchmarks).
    system_prompt: str | None = field(
        default=None,
        metadata={
            "cli": False,
            "help": "a candidate system message (text) instead of k0; empty means none",
        },
    )
    suite_data: str | Path | None = field(
        default=None,
        metadata={"cli": False, "help": "read prompts_<suite>.jsonl from this folder"},
    )
    max_gen_toks: int | None = field(
        default=None,
        metadata={"cli": False, "help": "NOT served: a generation limit for tests on tiny"},
    )
    folder_name: str | None = field(
        default=None,
        metadata={"cli": False, "help": "a candidate's result folder under RUN/eval/"},
    )

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit < 1:
            raise EvaluationInputError(
                f"--limit must be at least 1, got {self.limit}.", field="limit"
            )
        for name in ("tensor_parallel_size", "data_parallel_size", "batch_size", "num_processes"):
            value = getattr(self, name)
            if value is not None and value < 1:
                flag = "--" + name.replace("_", "-")
                raise EvaluationInputError(f"{flag} must be at least 1, got {value}.", field=name)
        if self.endpoint is None and self.endpoint_model is not None:
            raise EvaluationInputError(
                "--endpoint-model needs --endpoint URL.", field="endpoint_model"
            )
        if self.endpoint is not None and self.backend != "hf":
            raise EvaluationInputError(
                f"--endpoint scores a running server: leave out --backend {self.backend}.",
                field="backend",
            )
        if self.num_processes > 1 and (self.backend != "hf" or self.endpoint is not None):
            raise EvaluationInputError(
                "--num-processes runs the hf model data-parallel under accelerate; for vLLM use "
                "--data-parallel-size, and a server (--endpoint) parallelises itself.",
                field="num_processes",
            )
        if self.num_processes > 1 and self.revise is not None:
            raise EvaluationInputError(
                "--revise runs in one process; drop --num-processes.", field="num_processes"
            )
        if self.revise is not None:
            self._check_revise()
        if self.system_prompt is not None and self.system_prompt_file is not None:
            raise EvaluationInputError(
                "give a candidate system prompt as text or as --system-prompt-file, not both.",
                field="system_prompt_file",
            )
        if self.system_prompt_file is not None and self.system_prompt_id is None:
            self.system_prompt_id = Path(self.system_prompt_file).stem
        if self.system_prompt_id is not None and self.system_prompt_file is None:
            if self.system_prompt is None:
                raise EvaluationInputError(
                    "--system-prompt-id needs --system-prompt-file (a candidate system prompt "
                    "needs both its text and its id).",
                    field="system_prompt_id",
                )
        elif self.system_prompt is not None and self.system_prompt_id is None:
            raise EvaluationInputError(
                "a candidate system prompt needs both its text and its id "
                "(--system-prompt-file FILE --system-prompt-id ID).",
                field="system_prompt_id",
            )
        if self.system_prompt_id is not None and not PROMPT_ID.fullmatch(self.system_prompt_id):
            raise EvaluationInputError(
                f"system prompt id {self.system_prompt_id!r}: use letters, digits, '_', '.' and "
                "'-' only (it names the result folder).",
                field="system_prompt_id",
            )

    def _check_revise(self) -> None:
        if self.revise is not None and self.revise < 1:
            raise EvaluationInputError(
                f"--revise must be at least 1 (answers per prompt), got {self.revise}.",
                field="revise",
            )
        wrong = [s for s in self.suite.split(",") if s.strip() not in REVISABLE_SUITES]
        if wrong:
            raise EvaluationInputError(
                f"--revise scores one checked instruction-following suite ("
                f"{', '.join(REVISABLE_SUITES)}), got --suite {self.suite}.",
                field="revise",
            )
        if "," in self.suite:
            raise EvaluationInputError(
                f"--revise scores one suite at a time; pass one of {', '.join(REVISABLE_SUITES)}.",
                field="revise",
            )
        if self.backend != "hf":
            raise EvaluationInputError(
                "--revise runs in process (backend hf); drop --backend.", field="revise"
            )
        if self.system_prompt is not None or self.system_prompt_file is not None:
            raise EvaluationInputError(
                "--revise scores the served system prompt; drop --system-prompt-file.",
                field="revise",
            )

    def candidate_text(self) -> str | None:
        """The candidate system prompt's text (read from `system_prompt_file`), or None.

        Raises:
            EvaluationFileError: the file does not exist (`path` set).
        """
        if self.system_prompt_file is None:
            return self.system_prompt
        path = Path(self.system_prompt_file)
        if not path.is_file():
            raise EvaluationFileError(
                f"--system-prompt-file {path}: no such file.", path=path, field="system_prompt_file"
            )
        return path.read_text(encoding="utf-8").strip()
