"""The Python side of the lm-eval tasks in `tasks/lm_eval/`: datasets, prompts and metrics.

`tasks/lm_eval/utils.py` only forwards to these functions, so that lm-eval (which imports that
file by path, once per `!function` reference) and rsi-hub share one implementation and one
module state. Every verdict comes from `rsi_hub.checker`.

Metrics (per document; lm-eval aggregates them as the task YAMLs say):

- IF suites: `acc` (the prompt passes every check; mean), `pass_count` (sum) and, for every
  check type the prompt carries, `miss_<type>` (1 when a check of that type failed). A
  document only reports the types it carries, so the mean over the documents that report it is
  the card's "miss rate" (prompts failing it / prompts carrying it).
- EV4: `checks_passed` and `checks_total` (sums: the card's "104/115"), `acc` (every check of the
  prompt passed), `stop_rate` (the answer ended on a stop token before the limit),
  `answer_tokens` (mean answer length in tokens), `stop_exact` (share of answers whose ending was
  read from the generated token ids rather than estimated), and `miss_<type>` as above.
- PREF: `acc_norm` (per-token mean log-probability of the chosen answer above the rejected
  one's), `acc_norm_chars` (lm-eval's convention: divided by characters), `acc` (total
  log-probability). See `tasks/lm_eval/README.md` for why tokens.

How an EV4 answer ended: rsi-hub's model classes read it from the generated token ids
(`genfacts`). Under a plain `lm_eval --model hf` run nothing is recorded and the answer is
re-tokenised with the run's tokenizer: stopped when it is shorter than `max_gen_toks` tokens.
Re-tokenisation can merge tokens the model generated separately, so it can undercount a
truncated answer and call it stopped; the exact reading has no such error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from rsi_hub.chat import MAX_NEW_TOKENS
from rsi_hub.errors import EvaluationInputError
from rsi_hub.evaluate import genfacts
from rsi_hub.evaluate.protocol import GENERATION_PROMPT
from rsi_hub.shipped import resource_path

# What lm-eval passes to `custom_dataset` (merged model_args and --metadata) that we remember for
# the metrics: the tokenizer (from `tokenizer` or `pretrained`) and the generation limit.
_CONTEXT: dict[str, Any] = {}


def tasks_dir() -> Path:
    """The installed `tasks/lm_eval/` folder: lm-eval's `--include_path` (`rsi-hub tasks-path`)."""
    return resource_path("lm_eval")


def data_dir() -> Path:
    """The folder of the suite files (`tasks/lm_eval/data/`, or $RSI_HUB_SUITES_DIR)."""
    from rsi_hub.suites import data_dir as suites_data_dir

    return suites_data_dir()


def _remember(metadata: dict[str, Any]) -> None:
    tokenizer = metadata.get("tokenizer") or metadata.get("pretrained")
    if isinstance(tokenizer, str):
        _CONTEXT["tokenizer"] = tokenizer
    if metadata.get("max_gen_toks") is not None:
        _CONTEXT["max_gen_toks"] = int(metadata["max_gen_toks"])
    else:
        _CONTEXT.pop("max_gen_toks", None)


@lru_cache(maxsize=4)
def _load_tokenizer(name: str) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(name)


def _tokenizer() -> Any:
    name = _CONTEXT.get("tokenizer")
    if not name:
        raise EvaluationInputError(
            "this metric counts tokens but no tokenizer is known: lm-eval passes the model "
            "arguments to the task, so run with --model_args pretrained=RUN (or pass "
            '--metadata \'{"tokenizer": "RUN"}\').',
            field="tokenizer",
        )
    return _load_tokenizer(name)


def count_tokens(text: str) -> int:
    """Tokens of `text` under the run's tokenizer, without special tokens."""
    return len(_tokenizer()(text, add_special_tokens=False)["input_ids"])


def count_answer_tokens(answer: str) -> int:
    """Tokens of `answer` as it is tokenised after the generation prompt.

    The tokenizer splits at special tokens before anything else, so the text after
    `<|im_start|>` ("assistant\n" + answer) tokenises the same whatever came before it: counting
    against the generation prompt alone gives the answer's exact token count in context, even
    when its first characters would merge with the prompt's newline (an answer starting "\n").
    """
    tokenizer = _tokenizer()
    with_answer = tokenizer(GENERATION_PROMPT + answer, add_special_tokens=False)["input_ids"]
    alone = tokenizer(GENERATION_PROMPT, add_special_tokens=False)["input_ids"]
    return len(with_answer) - len(alone)


# --- datasets ----------------------------------------------------------------------------------


class DocList(list):
    """Documents as plain dicts, with the one `datasets.Dataset` attribute lm-eval reads.

    Plain dicts (not an Arrow table) keep each row exactly as written: Arrow would merge the
    parameters of all check types into one struct and fill the gaps with nulls, changing both
    the checks and the logged documents.
    """

    @property
    def features(self) -> dict[str, None]:
        return dict.fromkeys(self[0]) if self else {}


def load_suite_file(suite: str, folder: str | Path | None = None) -> Any:
    """The validated `rsi_hub.suites.Suite` of a checked suite (rows, path, sha256).

    The shipped `prompts_<suite>.jsonl` (hash-checked against its manifest), or the file of
    that name in `folder` when given.
    """
    from rsi_hub.suites import load_suite

    return load_suite(Path(folder) / f"prompts_{suite}.jsonl" if folder else suite)


def load_checked_suite(suite: str, **metadata: Any) -> dict[str, DocList]:
    """lm-eval `custom_dataset` for the checked suites: a `test` split of plain dicts.

    `--metadata '{"suite_dir": FOLDER}'` reads `FOLDER/prompts_<suite>.jsonl` instead of the
    shipped file.
    """
    _remember(metadata)
    return {"test": DocList(load_suite_file(suite, metadata.get("suite_dir")).rows)}


def prompt_text(doc: dict[str, Any]) -> str:
    """lm-eval `doc_to_text`: the user message."""
    return doc["prompt"]


# --- checked suites ----------------------------------------------------------------------------


def _verdict(doc: dict[str, Any], response: str) -> Any:
    from rsi_hub.checker import check

    return check(response, doc["checks"])


def _miss_metrics(results: Sequence[Any]) -> dict[str, float]:
    # A prompt can carry a type twice (two word_times); it "fails the type" if any of them fails.
    misses: dict[str, float] = {}
    for result in results:
        key = f"miss_{result.type}"
        misses[key] = max(misses.get(key, 0.0), 0.0 if result.passed else 1.0)
    return misses


def if_metrics(verdict: Any) -> dict[str, float]:
    """The per-document metrics of an IF suite from the checker's verdict on the answer."""
    passed = 1.0 if verdict.passed else 0.0
    return {"acc": passed, "pass_count": passed, **_miss_metrics(verdict.results)}


def process_if(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """lm-eval `process_results` of IF-818, IF263 and IF-3k."""
    return if_metrics(_verdict(doc, results[0]))


def ev4_check_metrics(verdict: Any) -> dict[str, float]:
    """The per-document EV4 metrics that the checker's verdict decides (not the stop facts)."""
    return {
        "checks_passed": float(sum(r.passed for r in verdict.results)),
        "checks_total": float(len(verdict.results)),
        "acc": 1.0 if verdict.passed else 0.0,
        **_miss_metrics(verdict.results),
    }


def _ending(doc: dict[str, Any], response: str) -> tuple[int, bool, bool]:
    """(answer tokens, stopped before the limit, measured exactly) for one EV4 answer."""
    facts = genfacts.lookup(doc)
    if facts is not None:
        return facts.tokens, facts.stopped, True
    limit = _CONTEXT.get("max_gen_toks", MAX_NEW_TOKENS)
    tokens = count_tokens(response)
    return tokens, tokens < limit, False


def process_ev4(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """lm-eval `process_results` of EV4."""
    verdict = _verdict(doc, results[0])
    tokens, stopped, exact = _ending(doc, results[0])
    metrics = ev4_check_metrics(verdict)
    misses = {k: metrics.pop(k) for k in [k for k in metrics if k.startswith("miss_")]}
    return {
        **metrics,
        "stop_rate": 1.0 if stopped else 0.0,
        "answer_tokens": float(tokens),
        "stop_exact": 1.0 if exact else 0.0,
        **misses,
    }


# --- PREF --------------------------------------------------------------------------------------


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI-style parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    raise EvaluationInputError(
        f"PREF: message content {content!r} is neither text nor text parts", field="pref_data"
    )


def _answer(value: Any) -> str:
    # An answer is a string, or a conversation whose last message is the assistant's.
    if isinstance(value, list):
        if not value or value[-1].get("role") != "assistant":
            raise EvaluationInputError(
                "PREF: a chosen/rejected conversation must end with the assistant",
                field="pref_data",
            )
        return _text(value[-1]["content"])
    return _text(value)


def pref_doc(index: int, prompt: Any, chosen: Any, rejected: Any) -> dict[str, Any]:
    """One PREF document: `id`, `system` ("" for none), `prompt` (the user turn), the answers.

    lm-eval builds a prompt from one user message (plus an optional system message), so a pair
    whose prompt has several user turns cannot be scored faithfully and is refused.
    """
    messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
    # A chosen conversation that repeats the prompt (ultrafeedback style) adds nothing here.
    system = "".join(_text(m["content"]) for m in messages if m.get("role") == "system")
    turns = [m for m in messages if m.get("role") != "system"]
    if len(turns) != 1 or turns[0].get("role") != "user":
        raise EvaluationInputError(
            f"PREF pair {index}: the prompt must be one user message (optionally after a system "
            f"message); got roles {[m.get('role') for m in messages]}.",
            field="pref_data",
        )
    return {
        "id": str(index),
        "system": system,
        "prompt": _text(turns[0]["content"]),
        "chosen": _answer(chosen),
        "rejected": _answer(rejected),
    }


def load_pref_pairs(**metadata: Any) -> dict[str, DocList]:
    """lm-eval `custom_dataset` of PREF: the held-out pairs, or `pref_data` from --metadata."""
    _remember(metadata)
    from rsi_hub.suites import load_pref

    source = metadata.get("pref_data")
    pairs = load_pref(source) if source else load_pref()
    return {
        "test": DocList(
            pref_doc(i, prompt, chosen, rejected)
            for i, (prompt, chosen, rejected) in enumerate(pairs)
        )
    }


def pref_choices(doc: dict[str, Any]) -> list[str]:
    """lm-eval `doc_to_choice` of PREF: the chosen answer first, then the rejected one."""
    return [doc["chosen"], doc["rejected"]]


def process_pref(doc: dict[str, Any], results: list[tuple[float, bool]]) -> dict[str, float]:
    """lm-eval `process_results` of PREF: is the chosen answer more likely than the rejected?

    A tie counts as a miss (lm-eval's argmax would credit the first choice).
    """
    (ll_chosen, _), (ll_rejected, _) = results[0], results[1]
    chosen, rejected = doc["chosen"], doc["rejected"]
    per_token = (
        ll_chosen / max(count_answer_tokens(chosen), 1),
        ll_rejected / max(count_answer_tokens(rejected), 1),
    )
    per_char = (ll_chosen / max(len(chosen), 1), ll_rejected / max(len(rejected), 1))
    return {
        "acc_norm": 1.0 if per_token[0] > per_token[1] else 0.0,
        "acc_norm_chars": 1.0 if per_char[0] > per_char[1] else 0.0,
        "acc": 1.0 if ll_chosen > ll_rejected else 0.0,
    }


# --- aggregations ------------------------------------------------------------------------------


def total(items: Sequence[float]) -> float:
    """Aggregation: the sum (pass counts, checks passed)."""
    return float(sum(items))


def miss_rate(items: Sequence[float]) -> float:
    """Aggregation: failing prompts / prompts carrying the check type (NaN when none carry it)."""
    return float(sum(items)) / len(items) if items else math.nan
