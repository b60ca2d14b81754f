"""The Space's logic without a browser: streaming with a live checklist, history, the input
limit, the main job's answer-with-checklist, and the deploy command's exact upload."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from rsi_hub.chat import STOP_TOKEN_IDS, load_system_prompt
from rsi_hub.errors import NotAModelFolderError
from rsi_hub.space_support import (
    CHECKLIST_TITLE,
    answer_with_checklist,
    checklist_for,
    extract_specs,
    format_rounds,
    judge,
    load_chat_model,
)
from rsi_hub.space_support.deploy import deploy_space, space_files

APP = Path(__file__).resolve().parents[1] / "space" / "app.py"


@pytest.fixture(scope="module")
def app() -> ModuleType:
    spec = importlib.util.spec_from_file_location("space_app", APP)
    module = importlib.util.module_from_spec(spec)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MAX_NEW_TOKENS", "12")  # read when the app module is imported
        spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def chat(tiny_run: Path):
    return load_chat_model(str(tiny_run))


def test_reply_streams_with_a_live_checklist_then_a_final_one(app, chat, monkeypatch) -> None:
    seen: dict[str, Any] = {}
    generate = chat.model.generate

    def spy(**kwargs: Any) -> Any:
        seen.update(kwargs)
        return generate(**kwargs)

    monkeypatch.setattr(chat.model, "generate", spy)
    updates = list(
        app.make_responder(chat)("Answer in exactly two words. Do not use the letter q.", [])
    )
    assert len(updates) >= 3  # several partial answers, then the final one
    for _, checklist in updates[:-1]:
        assert checklist["metadata"]["status"] == "pending"
        assert "still streaming" in checklist["content"]
    answer, checklist = updates[-1]
    assert "status" not in checklist["metadata"]
    assert checklist["metadata"]["title"] == CHECKLIST_TITLE
    assert "exactly 2 words" in checklist["content"] and "no “q” anywhere" in checklist["content"]
    assert answer["content"] == updates[-2][0]["content"]  # the last streamed text is the answer
    assert seen["eos_token_id"] == list(STOP_TOKEN_IDS) and seen["do_sample"] is False
    assert seen["max_new_tokens"] == 12


def test_verify_and_revise_shows_every_round(app, chat, monkeypatch) -> None:
    """With the toggle on, failed answers go back with the checker's reasons; the checklist
    shows each round's ticks and crosses, and the answer shown is the best one."""
    message = "Answer in exactly two words. Do not use the letter q."
    prompts: list[str] = []
    answers: list[str] = []
    generate = chat.model.generate

    def spy(**kwargs: Any) -> Any:
        out = generate(**kwargs)
        start = kwargs["input_ids"].shape[1]
        prompts.append(chat.tokenizer.decode(kwargs["input_ids"][0]))
        answers.append(chat.tokenizer.decode(out[0, start:], skip_special_tokens=True))
        return out

    monkeypatch.setattr(chat.model, "generate", spy)
    updates = list(app.make_responder(chat)(message, [], True))
    specs = extract_specs(message)
    rounds = [judge(specs, answer) for answer in answers]
    passed = [sum(item.passed for item in items) for items in rounds]
    best = passed.index(max(passed))
    # The tiny model's answers are noise: it fails two words and is asked again, 3 answers.
    assert len(answers) == app.REVISE_ROUNDS == 3 and not all(i.passed for i in rounds[0])
    assert len(updates) == 4  # one per judged round, then the final one
    for step, (_, box) in enumerate(updates[:-1]):
        assert box["metadata"]["status"] == "pending"
        assert f"Round {step + 1}" in box["content"] and f"Round {step + 2}" not in box["content"]
    answer, box = updates[-1]
    assert answer["content"] == answers[best]
    assert "status" not in box["metadata"] and box["metadata"]["title"] == CHECKLIST_TITLE
    assert box["content"] == format_rounds(rounds, kept=best, max_rounds=3)
    assert "\nRound 3" in box["content"]
    assert "- ✗ exactly 2 words — expected 2 words, got " in box["content"]
    # Round two read the first answer and the checker's reasons as a new user turn.
    assert answers[0] in prompts[1]
    assert "the request asks for exactly 2. " in prompts[1]


def test_next_turn_leaves_checklists_out_of_the_prompt(app) -> None:
    history = [
        {"role": "user", "content": "Hi in one word."},
        {"role": "assistant", "content": "Hello", "metadata": None},
        {"role": "assistant", "content": "**1 of 1 …**", "metadata": {"title": CHECKLIST_TITLE}},
    ]
    assert app.model_messages(history, "Again.") == [
        {"role": "user", "content": "Hi in one word."},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Again."},
    ]


def test_over_long_input_gets_a_clear_message(app, chat) -> None:
    updates = list(app.make_responder(chat)("sea " * 9000, []))
    assert len(updates) == 1
    (message,) = updates[0]
    assert "over the model's limit of 8,192 input tokens" in message["content"]


def test_answer_with_checklist_through_pipeline(tiny_run: Path) -> None:
    printed: list[str] = []
    answer = answer_with_checklist(
        tiny_run, "Describe the sea in exactly forty words.", max_new_tokens=8, log=printed.append
    )
    assert [item.label for item in answer.checklist] == ["exactly 40 words"]
    assert answer.checklist == checklist_for(answer.message, answer.reply)
    assert printed[0].startswith("reply: ")
    assert printed[1].startswith("Constraint checklist: ")
    assert "[ ] exactly 40 words" in printed[1] or "[x] exactly 40 words" in printed[1]


def test_api_holds_a_conversation(app, chat, monkeypatch) -> None:
    """`/respond` takes the earlier turns: a gradio_client call reaches the model with them."""
    from gradio_client import Client

    prompts: list[str] = []
    generate = chat.model.generate

    def spy(**kwargs: Any) -> Any:
        prompts.append(chat.tokenizer.decode(kwargs["input_ids"][0]))
        return generate(**kwargs)

    monkeypatch.setattr(chat.model, "generate", spy)
    history = [
        {"role": "user", "content": "Name a sea."},
        {"role": "assistant", "content": "The Baltic."},
        {"role": "assistant", "content": "**1 of 1 …**", "metadata": {"title": CHECKLIST_TITLE}},
    ]
    demo = app.build_demo(chat)
    demo.queue().launch(prevent_thread_lock=True, server_name="127.0.0.1", quiet=True)
    try:
        client = Client(demo.local_url, verbose=False)
        params = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
        assert [p["parameter_name"] for p in params["/respond"]["parameters"]] == [
            "message",
            "history",
            "verify_and_revise",
        ]
        answer, checklist = client.predict("Another, in two words.", history, api_name="/respond")
    finally:
        demo.close()
    expected = chat.tokenizer.apply_chat_template(
        [
            {"role": "user", "content": "Name a sea."},
            {"role": "assistant", "content": "The Baltic."},
            {"role": "user", "content": "Another, in two words."},
        ],
        tokenize=False,
        add_generation_prompt=True,
    )
    assert prompts == [expected]
    assert answer["role"] == "assistant" and isinstance(answer["content"], str)
    assert checklist["metadata"]["title"] == CHECKLIST_TITLE
    assert "exactly 2 words" in checklist["content"]


def _parent_folder(tmp_path: Path) -> Path:
    """A folder laid out as `rsi-hub demo` leaves it: model folders inside, none itself."""
    for name in ("tiny", "sft", "release"):
        (tmp_path / "demo" / name).mkdir(parents=True)
        (tmp_path / "demo" / name / "config.json").write_text("{}")
    return tmp_path / "demo"


def test_app_names_a_parent_folder_in_one_line(tmp_path: Path) -> None:
    parent = _parent_folder(tmp_path)
    env = {**os.environ, "MODEL_ID": str(parent)}
    done = subprocess.run(
        [sys.executable, str(APP)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"space/app.py: MODEL_ID={parent}: {parent} is not a model folder (it has no "
        f"config.json); pass one of the model folders inside it: {parent}/release, "
        f"{parent}/sft, {parent}/tiny (e.g. {parent}/release), or a Hub repository id."
    ]


def test_answer_refuses_a_parent_folder(tmp_path: Path) -> None:
    with pytest.raises(NotAModelFolderError, match=r"demo is not a model folder .*/demo/release"):
        answer_with_checklist(_parent_folder(tmp_path), "Hi.")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(NotAModelFolderError, match=r"pass a folder that holds config\.json"):
        answer_with_checklist(empty, "Hi.")


class SpaceHub:
    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple, dict]] = []

    def __getattr__(self, name: str):
        def record(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args, kwargs))
            return SimpleNamespace(commit_url="https://hf.co/commit/x")

        return record


def test_deploy_sends_the_app_and_what_it_imports_in_one_commit() -> None:
    hub = SpaceHub()
    deploy_space("me/chat", model_id="me/model", api=hub, log=lambda _: None)
    names = [name for name, _, _ in hub.calls]
    assert names == ["create_repo", "create_commit", "add_space_variable"]
    assert hub.calls[0][2] == {
        "repo_type": "space",
        "space_sdk": "gradio",
        "private": False,
        "exist_ok": True,
    }
    paths = {op.path_in_repo for op in hub.calls[1][1][1]}
    assert {
        "app.py",
        "README.md",
        "requirements.txt",
        "rsi_hub/shipped.py",
        "rsi_hub/resources/templates/chat_template.jinja",
    } <= paths
    assert {"rsi_hub/checker/__init__.py", "rsi_hub/serving/constraints.py"} <= paths
    assert not any(
        "__pycache__" in p or p.startswith(("rsi_hub/train", "rsi_hub/release")) for p in paths
    )
    assert hub.calls[2][1] == ("me/chat", "MODEL_ID", "me/model")


def test_deployed_files_run_on_their_own(tmp_path: Path) -> None:
    for path_in_repo, source in space_files().items():
        (tmp_path / path_in_repo).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, tmp_path / path_in_repo)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = (
        "import app, rsi_hub; print(rsi_hub.__file__); "
        "print(app.extract_specs('Answer in exactly two words.')); "
        "from rsi_hub.chat import load_system_prompt; print(len(load_system_prompt()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith(str(tmp_path))
    assert "{'type': 'word_eq', 'n': 2}" in done.stdout
    # The deployed rsi_hub reads the serving contract from its own resources/templates/.
    assert done.stdout.splitlines()[-1] == str(len(load_system_prompt()))
