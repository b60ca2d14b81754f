"""Stand-ins for the synth tests: a generator with known answers, and the suites' hooks.

The generator returns canned completions per (prompt id, sample), so a test knows exactly which
samples pass the real checker. The eligibility rule and the audit stand in for the suites
package's in the library-level tests; the CLI tests use the real ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rsi_hub.synth import Generation, GenerationRequest, PoolPrompt

PROMPTS = [
    PoolPrompt("p1", "Name a colour in exactly three words.", ({"type": "word_eq", "n": 3},)),
    PoolPrompt(
        "p2",
        "Describe the sea without the letter z, in at least two words.",
        ({"type": "no_char", "char": "z"}, {"type": "word_min", "n": 2}),
    ),
    PoolPrompt("p3", "Say hello in upper case.", ({"type": "is_upper"},)),
]

# (prompt id, sample) -> (completion, truncated). Lensyn completions carry FINAL: markers.
LENSYN_OUTPUTS: dict[tuple[str, int], tuple[str, bool]] = {
    ("p1", 0): (
        "Draft: deep ocean blue tone\nCount: 4 words, one too many.\nFINAL: deep ocean blue",
        False,
    ),
    ("p1", 1): ("FINAL: deep blue", False),  # fails word_eq
    ("p1", 2): ("I think the answer is blue.", False),  # no marker
    ("p2", 0): ("**FINAL:** Calm grey water", False),
    ("p2", 1): ("FINAL: Hazy", False),  # fails both checks
    ("p2", 2): ("FINAL:   \n", False),  # empty
    ("p3", 0): ("FINAL: HELLO THERE", True),  # truncated: over-long
    ("p3", 1): ("FINAL: draft\nFINAL: HELLO", False),  # the last marker wins
    ("p3", 2): ("FINAL: Hello", False),  # fails is_upper
}
PASSING = {("p1", 0): "deep ocean blue", ("p2", 0): "Calm grey water", ("p3", 1): "HELLO"}


class StandInBackend:
    """Returns canned completions; records every request; can fail on a chosen call."""

    name = "standin"

    def __init__(
        self,
        outputs: dict[tuple[str, int], tuple[str, bool]] | None = None,
        *,
        interrupt_on_call: int | None = None,
    ) -> None:
        self.outputs = outputs or LENSYN_OUTPUTS
        self.interrupt_on_call = interrupt_on_call
        self.calls = 0
        self.requested: list[tuple[str, int]] = []

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Generation]:
        self.calls += 1
        if self.calls == self.interrupt_on_call:
            raise KeyboardInterrupt  # a deliberate interruption, as Ctrl-C or a pre-emption
        out = []
        for r in requests:
            self.requested.append((str(r.prompt_id), r.sample))
            text, truncated = self.outputs[(str(r.prompt_id), r.sample)]
            out.append(Generation(text, truncated, len(text.split())))
        return out


def every_id(_prompt: Any) -> bool:
    """Eligibility stand-in: every stand-in prompt is eligible."""
    return True


def clean_audit(data_path: Path) -> dict[str, Any]:
    """Audit stand-in: reports what the suites' audit reports on clean data."""
    return {"passed": True, "overlap": {}, "data": data_path.name, "standin": True}
