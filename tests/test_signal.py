"""A test with signal (issue 14): SFT on checker-verified teacher data makes a random-init nano
`nemotron_h` follow significantly more checks on held-out IF-818 prompts than it did untrained.

Round 0 runs through the replication's own stages (`rsi_hub.experiments.signal`) at a small
budget. The same criterion is then shown to fail when one bug is planted in a fixture:

- `mask_shift`: prep's assistant mask one token early (the loss lands on the generation prompt's
  last token and misses `<|im_end|>`, so the model never learns to stop);
- `template`: prep renders the training rows in another chat format than the served ChatML
  (`### User:` / `### Assistant:`, no system turn, answers ended by `</s>`);
- `stop`: the evaluation stops at `</s>` instead of `<|im_end|>` (the answer runs on past it).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from rsi_hub.experiments.signal import (
    SIGNAL_EVAL_PROMPTS,
    SIGNAL_MAX_NEW_TOKENS,
    CheckLevelPairs,
    pair_check_levels,
    round0_signal,
    signal_config,
)

ALPHA = 0.001
# Round 0 must also gain this many points of check-level pass rate. Measured at the signal
# budget (seed 0, 153 prompt x check-type pairs): the sound pipeline 9.2 % -> 26.1 % (+16.9,
# p = 3e-8); planted, mask_shift -1.4, template +7.8 (p = 4.9e-4: the nano model still
# transfers part of what it learned across chat formats), stop 0.0. The threshold sits between.
MIN_GAIN_POINTS = 12.0

pytestmark = pytest.mark.slow


def signal_holds(checks: CheckLevelPairs) -> bool:
    """The test's criterion: significant at ALPHA and at least MIN_GAIN_POINTS higher."""
    gain = 100 * (checks.trained_rate - checks.init_rate)
    return checks.significant_gain(ALPHA) and gain >= MIN_GAIN_POINTS


@contextmanager
def _planted(bug: str) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        if bug == "mask_shift":
            from rsi_hub.data import prep
            from rsi_hub.data.masking import TokenisedRow, tokenise_segments

            def shifted(tokenizer, conversations):
                rows = tokenise_segments(tokenizer, conversations)
                return [TokenisedRow(r.input_ids, [*r.assistant_masks[1:], 0]) for r in rows]

            patch.setattr(prep, "tokenise_segments", shifted)
        elif bug == "template":
            from rsi_hub.chat.tokens import EOS_TOKEN
            from rsi_hub.data import prep

            # Another chat format: the plain "### User:" / "### Assistant:" layout many base
            # models were tuned with (no system turn, answers ended by `</s>`), rendered for
            # training while serving stays ChatML with k0.
            def other_format(messages):
                segments, prompt = [], ""
                for message in messages:
                    if message["role"] == "assistant":
                        segments += [(prompt + "### Assistant:\n", False)]
                        segments += [(message["content"] + EOS_TOKEN, True)]
                        prompt = "\n\n"
                    elif message["role"] == "user":  # the format has no system turn
                        prompt += f"### User:\n{message['content']}\n\n"
                return segments

            patch.setattr(prep, "conversation_segments", other_format)
        elif bug == "stop":
            from rsi_hub.chat.tokens import EOS_TOKEN, SPECIAL_TOKEN_IDS
            from rsi_hub.evaluate.models import RsiHFLM

            real = RsiHFLM._model_generate
            eos = SPECIAL_TOKEN_IDS[EOS_TOKEN]

            def stops_at_eos(self, context, max_length, stop, **kwargs):
                kwargs["eos_token_id"] = eos
                return real(self, context, max_length, [EOS_TOKEN], **kwargs)

            patch.setattr(RsiHFLM, "_model_generate", stops_at_eos)
        else:
            raise ValueError(bug)
        yield


def test_sft_on_verified_data_raises_the_held_out_check_level_pass_rate(nano_demo) -> None:
    # `rsi-hub demo` is round 0 at the signal budget (tests/conftest.py): its paired verdicts.
    checks = nano_demo.check_pairs
    print(checks.describe())
    assert checks.n >= SIGNAL_EVAL_PROMPTS  # every prompt carries at least one check type
    assert signal_holds(checks), checks.describe()
    assert nano_demo.prompts_scored == SIGNAL_EVAL_PROMPTS
    assert nano_demo.round0_passed > nano_demo.init_passed


@pytest.mark.parametrize("bug", ["mask_shift", "template"])
def test_a_planted_training_bug_removes_the_signal(bug: str, nano_demo, tmp_path: Path) -> None:
    # The same seed builds the same init, so the demo's scored init is this run's baseline.
    with _planted(bug):
        result = round0_signal(signal_config(tmp_path / bug), baseline=nano_demo.init_dir)
    print(bug, result.checks.describe())
    assert not signal_holds(result.checks), f"{bug} planted, yet {result.checks.describe()}"


def test_an_eval_that_stops_at_the_wrong_token_removes_the_signal(
    nano_demo, tmp_path: Path
) -> None:
    from rsi_hub.evaluate import evaluate_run
    from rsi_hub.evaluate.config import EvalConfig

    run = tmp_path / "round0"
    shutil.copytree(nano_demo.run_dir, run, ignore=shutil.ignore_patterns("eval"))
    with _planted("stop"):
        evaluate_run(
            EvalConfig(run, "if818", limit=SIGNAL_EVAL_PROMPTS, max_gen_toks=SIGNAL_MAX_NEW_TOKENS)
        )
    checks = pair_check_levels(nano_demo.init_dir, run)
    print("stop", checks.describe())
    assert not signal_holds(checks), f"stop planted, yet {checks.describe()}"
