"""RSIAgent-Delta chat demo: streaming greedy replies, with a live checklist of the constraints
stated in each message, judged by the same checker as the model's evaluation.

Run locally from a checkout, after `rsi-hub demo`:  MODEL_ID=runs/demo/release python space/app.py
(MODEL_ID defaults to the released repository, RSIArena/RSIAgent-Delta-Stage1.)
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# From a checkout, use that checkout's rsi_hub (space/ sits beside rsi_hub/); on the Space, the
# deploy command uploads rsi_hub/ next to this file, which Python finds on its own.
_CHECKOUT = Path(__file__).resolve().parent.parent
if (_CHECKOUT / "rsi_hub" / "__init__.py").is_file():
    sys.path.insert(0, str(_CHECKOUT))

import gradio as gr  # noqa: E402

from rsi_hub.errors import RsiHubError  # noqa: E402
from rsi_hub.serving import LocalGenerator, revise  # noqa: E402
from rsi_hub.space_support import (  # noqa: E402
    CHECKLIST_TITLE,
    ChatModel,
    InputTooLongError,
    checklist_message,
    extract_specs,
    items_from_verdict,
    judge,
    load_chat_model,
    rounds_message,
    stream_reply,
)
from rsi_hub.space_support.checklist import valid_specs  # noqa: E402

DEFAULT_MODEL_ID = "RSIArena/RSIAgent-Delta-Stage1"
MAX_NEW_TOKENS = int(os.environ.get("MAX_NEW_TOKENS", "1024"))
# Verify and revise: the most answers per message (the first one included).
REVISE_ROUNDS = int(os.environ.get("REVISE_ROUNDS", "3"))
EXAMPLES = [
    "Describe a lighthouse in exactly forty words, and do not use the letter z.",
    'Give three tips for sleeping well as exactly 3 bullet points. Start with "Sleep".',
    'Return a JSON object with keys "city" and "country" for the capital of Japan.',
]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # multimodal parts: keep the text
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def model_messages(history: list[dict[str, Any]], message: str) -> list[dict[str, str]]:
    """The conversation the model reads: earlier turns without the checklists, then `message`."""
    messages = []
    for turn in history:
        title = (turn.get("metadata") or {}).get("title")
        if title == CHECKLIST_TITLE or turn.get("role") not in ("user", "assistant"):
            continue
        messages.append({"role": turn["role"], "content": _text(turn.get("content"))})
    return [*messages, {"role": "user", "content": message}]


def revise_updates(
    chat: ChatModel, messages: list[dict[str, str]], message: str
) -> Iterator[list[dict[str, Any]]]:
    """Verify and revise: after each round, the best answer so far and every round's checklist.

    The loop (`rsi_hub.serving.revise`) runs in a worker thread and reports each judged round,
    so the page shows the rounds as they come rather than all at the end.
    """
    specs = valid_specs(extract_specs(message))
    generate = LocalGenerator(chat.model, chat.tokenizer, MAX_NEW_TOKENS)
    events: queue.Queue[tuple[str, Any]] = queue.Queue()

    def work() -> None:
        try:
            result = revise(
                generate,
                messages,
                specs,
                max_rounds=REVISE_ROUNDS,
                on_round=lambda r: events.put(("round", r)),
            )
            events.put(("done", result))
        except BaseException as err:  # shown in the chat, not lost in the thread
            events.put(("error", err))

    threading.Thread(target=work, daemon=True).start()
    rounds: list[Any] = []
    while True:
        kind, item = events.get()
        if kind == "error":
            if isinstance(item, RsiHubError):
                yield [{"role": "assistant", "content": f"⚠️ {item}"}]
                return
            raise item
        if kind == "round":
            rounds.append(item)
        best = max(range(len(rounds)), key=lambda i: (rounds[i].checks_passed, -i))
        if kind == "done":
            best = item.best_index
        checklists = [items_from_verdict(specs, r.verdict) for r in rounds]
        yield [
            {"role": "assistant", "content": rounds[best].answer},
            rounds_message(checklists, kept=best, max_rounds=REVISE_ROUNDS, final=kind == "done"),
        ]
        if kind == "done":
            return


def make_responder(chat: ChatModel):
    """The ChatInterface function: yields the growing answer and its checklist under it; with
    "verify and revise" on, the answers of each round and their checklists instead."""

    def respond(
        message: str, history: list[dict[str, Any]], verify_and_revise: bool = False
    ) -> Iterator[list[dict[str, Any]]]:
        if verify_and_revise:
            yield from revise_updates(chat, model_messages(history, message), message)
            return
        specs = extract_specs(message)
        reply = ""
        try:
            for reply in stream_reply(
                chat, model_messages(history, message), max_new_tokens=MAX_NEW_TOKENS
            ):
                yield [
                    {"role": "assistant", "content": reply},
                    checklist_message(judge(specs, reply), final=False),
                ]
        except InputTooLongError as err:
            yield [{"role": "assistant", "content": f"⚠️ {err}"}]
            return
        yield [{"role": "assistant", "content": reply}, checklist_message(judge(specs, reply))]

    return respond


def make_api(chat: ChatModel):
    """The `/respond` API endpoint: a whole conversation in, the answer and its checklist out.

    ChatInterface's own `/chat` endpoint takes only `message` (the UI keeps the history), so an
    API client could not hold a conversation; here it passes the earlier turns as `history`
    (OpenAI-style message dicts, as the chatbot shows them; checklist turns are skipped).
    """
    respond = make_responder(chat)

    def respond_api(
        message: str, history: list[dict[str, Any]] | None = None, verify_and_revise: bool = False
    ) -> list[dict[str, Any]]:
        # The last update is the answer.
        *_, final = respond(message, list(history or []), verify_and_revise)
        return final

    return respond_api


def build_demo(chat: ChatModel) -> gr.ChatInterface:
    """The Gradio app for a loaded model: the chat UI, its `/chat` endpoint and `/respond`."""
    demo = gr.ChatInterface(
        make_responder(chat),
        title="RSIAgent-Delta",
        description=(
            f"Model: `{chat.model_id}`, greedy decoding with the served system prompt k0, "
            "stops at <|im_end|>, at most 8,192 input tokens. Under each answer, a live checklist "
            "of the verifiable constraints your message states (word, sentence and repetition "
            "counts, forbidden letters and words, required opening or closing, bullets, JSON "
            "keys …), judged by the checker used in the model's evaluation. With \"verify and "
            "revise\" on, a failed answer is sent back with the checker's reasons and the "
            "checklist shows every round (not the served configuration: more tokens per "
            "answer)."
        ),
        additional_inputs=[
            gr.Checkbox(
                label="verify and revise",
                value=False,
                info=f"judge each answer with the checker and ask again with its reasons, up to "
                f"{REVISE_ROUNDS} answers; the checklist shows every round",
            )
        ],
        additional_inputs_accordion=gr.Accordion("Options", open=True),
        examples=[[example, False] for example in EXAMPLES],
        cache_examples=False,
        analytics_enabled=False,
        flagging_mode="never",
        api_name="chat",  # the UI's endpoint: `message` only (the UI holds the history)
    )
    with demo:
        gr.api(make_api(chat), api_name="respond")
    return demo


def main() -> None:
    model_id = os.environ.get("MODEL_ID", DEFAULT_MODEL_ID)
    try:
        chat = load_chat_model(model_id)
    except RsiHubError as err:  # a wrong MODEL_ID: one line that says what to pass instead
        sys.exit(f"space/app.py: MODEL_ID={model_id}: {err}")
    # Server name and port come from GRADIO_SERVER_NAME / GRADIO_SERVER_PORT when set.
    build_demo(chat).queue().launch()


if __name__ == "__main__":
    main()
