"""The live checklist: the constraints a message states, judged on a reply by the one checker."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rsi_hub.checker import CheckError, Verdict, check
from rsi_hub.serving.constraints import Spec, describe, extract_specs

CHECKLIST_TITLE = "Constraint checklist"
NO_CONSTRAINTS = (
    "No verifiable constraint found in your message. Try one: “in exactly forty words”, "
    "“use the word ‘sea’ twice”, “do not use the letter e”, “start with ‘Dear team’”."
)


@dataclass(frozen=True)
class ChecklistItem:
    """One constraint of the user's message and whether the reply meets it."""

    spec: Spec
    label: str
    passed: bool
    reason: str


def valid_specs(specs: list[Spec]) -> list[Spec]:
    """The specs the checker accepts (the extractor only emits valid ones; this keeps the
    checklist up if the two ever disagree, instead of failing the whole answer)."""
    accepted = []
    for spec in specs:
        try:
            check("", [spec])
        except CheckError:
            continue
        accepted.append(spec)
    return accepted


def judge(specs: list[Spec], reply: str) -> list[ChecklistItem]:
    """Judge `reply` on each spec with `rsi_hub.checker.check`; one item per spec, in order."""
    if not specs:
        return []
    return items_from_verdict(specs, check(reply, specs))


def items_from_verdict(specs: list[Spec], verdict: Verdict) -> list[ChecklistItem]:
    """The checklist of a verdict the checker already gave on `specs` (one item per spec)."""
    return [
        ChecklistItem(spec, describe(spec), result.passed, result.reason)
        for spec, result in zip(specs, verdict.results, strict=True)
    ]


def checklist_for(message: str, reply: str) -> list[ChecklistItem]:
    """Extract the constraints of `message` and judge `reply` on them."""
    return judge(valid_specs(extract_specs(message)), reply)


def format_checklist(
    items: list[ChecklistItem], *, markdown: bool = True, final: bool = True
) -> str:
    """The checklist as text: Markdown for the Space, plain `[x]` lines for a terminal.

    Args:
        items: the judged constraints.
        markdown: Markdown (✓/✗ list; glyphs every common font has) or plain text.
        final: whether the reply is complete (while streaming, the header says so).
    """
    if not items:
        return NO_CONSTRAINTS
    met = sum(item.passed for item in items)
    state = "" if final else " so far (the answer is still streaming)"
    header = f"{met} of {len(items)} constraints met{state}, judged by rsi_hub.checker"
    lines = []
    for item in items:
        why = f" — {item.reason}" if item.reason and not item.passed else ""
        if markdown:
            lines.append(f"- {'✓' if item.passed else '✗'} {item.label}{why}")
        else:
            lines.append(f"  [{'x' if item.passed else ' '}] {item.label}{why}")
    return "\n".join([f"**{header}**" if markdown else f"{CHECKLIST_TITLE}: {header}", *lines])


def format_rounds(
    rounds: list[list[ChecklistItem]], *, kept: int, max_rounds: int, final: bool = True
) -> str:
    """The verify-and-revise checklist: every round's ticks and crosses, the kept one marked.

    Args:
        rounds: one checklist per answer, in order.
        kept: index of the answer shown (the best so far).
        max_rounds: the most answers the loop may generate.
        final: whether the loop has ended (while it runs, the header says so).
    """
    if not rounds or not rounds[0]:
        return NO_CONSTRAINTS
    total = len(rounds[0])
    met = sum(item.passed for item in rounds[kept])
    state = "" if final else " so far (revising)"
    lines = [
        f"**Verify and revise: answer {kept + 1} of {len(rounds)} kept (up to {max_rounds}), "
        f"{met} of {total} constraints met{state}, judged by rsi_hub.checker**"
    ]
    for index, items in enumerate(rounds):
        mark = " (kept)" if index == kept else ""
        passed = sum(item.passed for item in items)
        lines.append(f"\nRound {index + 1}{mark}: {passed} of {total} met")
        for item in items:
            why = f" — {item.reason}" if item.reason and not item.passed else ""
            lines.append(f"- {'✓' if item.passed else '✗'} {item.label}{why}")
    return "\n".join(lines)


def checklist_message(items: list[ChecklistItem], *, final: bool = True) -> dict[str, Any]:
    """The chat message that shows the checklist under an answer in the Space.

    A titled box in Gradio's chatbot (message metadata), open: with a spinner while the answer
    streams (status "pending"), without one once it is complete (no status, which Gradio shows
    open; "done" would fold it away). The title also lets the next turn leave it out of what
    the model reads.
    """
    log = f"{sum(i.passed for i in items)} of {len(items)} met" if items else None
    return _box(format_checklist(items, final=final), log, final)


def rounds_message(
    rounds: list[list[ChecklistItem]], *, kept: int, max_rounds: int, final: bool = True
) -> dict[str, Any]:
    """The checklist box of a verify-and-revise answer: each round's ticks (`format_rounds`)."""
    log = f"{len(rounds)} round(s)" if rounds and rounds[0] else None
    content = format_rounds(rounds, kept=kept, max_rounds=max_rounds, final=final)
    return _box(content, log, final)


def _box(content: str, log: str | None, final: bool) -> dict[str, Any]:
    metadata: dict[str, Any] = {"title": CHECKLIST_TITLE}
    if log:
        metadata["log"] = log
    if not final:
        metadata["status"] = "pending"
    return {"role": "assistant", "content": content, "metadata": metadata}
