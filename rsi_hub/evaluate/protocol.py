"""The evaluation protocol: the suites, their lm-eval tasks, system-prompt setting and metrics.

Card section 4: IF-818 is scored with the served system prompt k0, IF263 without any system
message, and everything else in the served configuration (k0). The generation settings are the
serving contract's (card section 1).
"""

from __future__ import annotations

from dataclasses import dataclass

from rsi_hub.chat import IM_END_TOKEN, IM_START_TOKEN, MAX_NEW_TOKENS, SYSTEM_PROMPT_ID

#: How every served prompt ends (`add_generation_prompt`, thinking off): the answer follows it.
GENERATION_PROMPT = f"{IM_START_TOKEN}assistant\n"
PREF_DATASET = "HuggingFaceH4/ultrafeedback_binarized"
#: meta.json `extra.protocol` of a verify-and-revise evaluation (`rsi-hub eval --revise K`): its
#: own protocol, never the served configuration, in `RUN/eval/<suite>.revise-<K>/`.
REVISE_PROTOCOL = "verify-and-revise"
MMLU_DATASET = "cais/mmlu"


@dataclass(frozen=True)
class Suite:
    """One suite of `rsi-hub eval --suite`.

    Attributes:
        name: the `--suite` value and the folder under `RUN/eval/`.
        tasks: lm-eval task (or group) names run for it, in one lm-eval run.
        system_prompt: True for the template's default k0 system message, False for none.
        generates: True for generation tasks (judged by the checker), False for log-likelihood.
        paired_metric: the per-document 0/1 metric `compare` pairs documents on.
        score_metric: the headline number (`acc`, or a sum such as `pass_count`).
        hub_dataset: a Hub dataset lm-eval has to download (None when the data ship here).
    """

    name: str
    tasks: tuple[str, ...]
    system_prompt: bool = True
    generates: bool = True
    paired_metric: str = "acc"
    score_metric: str = "acc"
    hub_dataset: str | None = None

    @property
    def system_prompt_id(self) -> str | None:
        """The system prompt id, k0, or None for no system message."""
        return SYSTEM_PROMPT_ID if self.system_prompt else None


SUITES: dict[str, Suite] = {
    "if818": Suite("if818", ("if818",), score_metric="pass_count"),
    "if263": Suite("if263", ("if263",), system_prompt=False, score_metric="pass_count"),
    "if3k": Suite("if3k", ("if3k",), score_metric="pass_count"),
    "ev4": Suite("ev4", ("ev4",), score_metric="checks_passed"),
    "pref": Suite(
        "pref",
        ("pref",),
        generates=False,
        paired_metric="acc_norm",
        score_metric="acc_norm",
        hub_dataset=PREF_DATASET,
    ),
    "mmlu": Suite("mmlu", ("mmlu",), generates=False, hub_dataset=MMLU_DATASET),
}

#: `--suite all`: the card's selection suites, the members of the `rsi_suite` lm-eval group.
ALL_SUITES: tuple[str, ...] = ("if818", "if263", "ev4", "pref", "mmlu")
SUITE_CHOICES: tuple[str, ...] = (*SUITES, "all")


def resolve_suites(name: str) -> list[Suite]:
    """The suites `--suite NAME` runs, in order: one name, `all`, or a comma-separated list."""
    from rsi_hub.errors import EvaluationInputError

    chosen: list[Suite] = []
    for part in (p.strip() for p in name.split(",")):
        if part not in SUITE_CHOICES:
            raise EvaluationInputError(
                f"unknown suite {part!r}; choose from {', '.join(SUITE_CHOICES)} "
                "(or several, comma-separated).",
                field="suite",
            )
        for suite in ALL_SUITES if part == "all" else (part,):
            if SUITES[suite] not in chosen:
                chosen.append(SUITES[suite])
    return chosen


def served_generation(max_gen_toks: int = MAX_NEW_TOKENS) -> dict[str, object]:
    """The generation settings of the served configuration (what the task YAMLs say)."""
    return {
        "until": [IM_END_TOKEN],
        "max_gen_toks": max_gen_toks,
        "do_sample": False,
        "temperature": 0.0,
        "enable_thinking": False,
        "apply_chat_template": True,
    }
