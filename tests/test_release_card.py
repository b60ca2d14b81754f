"""The release facts and the model card rendered from them (no model is loaded here)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from rsi_hub.errors import ReleaseError
from rsi_hub.release.card import DIFFERS_MARK, render_card
from rsi_hub.release.eval_results import SuiteResult
from rsi_hub.release.facts import facts_root, load_facts

CARD = Path(__file__).parent / "data" / "RSIAgent-Delta-model-card.txt"
WEIGHTS = "ab" * 32


def _readme_lines(text: str) -> set[str]:
    """The card's lines with Markdown undone: headings, bullets, quotes, escapes, table pipes."""
    lines = set()
    for line in text.splitlines():
        line = line.replace("&lt;", "<").replace("\\*", "*").replace("\\|", "\x00")
        line = line.strip()
        if line.startswith("|") and line.endswith("|"):
            line = "\t".join(cell.strip() for cell in line.strip("|").split("|"))
        line = re.sub(r"^(#+|-|>) ", "", line).replace("\x00", "|")
        lines.add(line)
    return lines


def _result(suite: str, **kwargs: object) -> SuiteResult:
    return SuiteResult(suite=suite, folder=Path(suite), weights_sha256=WEIGHTS, **kwargs)


def test_card_holds_every_line_of_the_reference_card() -> None:
    text = render_card(load_facts("LA2b200s"), results={}, weights_sha256=WEIGHTS).text
    rendered = _readme_lines(text)
    missing = []
    for line in CARD.read_text(encoding="utf-8").splitlines():
        line = line.strip().removeprefix("• ")
        if line and line not in rendered:
            missing.append(line)
    assert missing == []


def test_card_front_matter_is_hub_metadata() -> None:
    text = render_card(load_facts("LA2b200s"), results={}, weights_sha256=WEIGHTS).text
    assert text.startswith("---\n")
    metadata = yaml.safe_load(text.split("\n---\n")[0].removeprefix("---\n"))
    assert metadata["base_model"] == "nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-Base-BF16"
    assert metadata["base_model_relation"] == "finetune"
    assert metadata["library_name"] == "transformers"
    assert metadata["pipeline_tag"] == "text-generation"
    assert metadata["license"] == "openmdw-1.1"
    assert "allenai/tulu-3-sft-mixture" in metadata["datasets"]
    assert "nemotron_h" in metadata["tags"]


def test_measured_cells_keep_agreeing_text_fill_dashes_and_flag_differences() -> None:
    facts = load_facts("LA2b200s")
    results = {
        "if818": _result("if818", value=562 / 818, passed=562, n=818),  # as the card says
        "if263": _result("if263", value=190 / 263, passed=190, n=263),  # differs from 193
        "mmlu": _result("mmlu", value=0.7149),
    }
    card = render_card(facts, results=results, weights_sha256=WEIGHTS)
    assert "| LA2b200s (uploaded) | 562 | 190/263 ‡ | 104/115 | 0.6182 | 0.7149 |" in card.text
    assert len(card.notes) == 2  # the IF263 cell of both tables that hold the uploaded row
    assert all(DIFFERS_MARK in note and "193" in note for note in card.notes)
    assert "| if818 | 562/818 | 818 | none |" in card.text  # the measured-results table

    tiny = render_card(
        load_facts("tiny"), results={"pref": _result("pref", value=0.25)}, weights_sha256=WEIGHTS
    )
    assert "| tiny (uploaded) | — | — | — | 0.2500 | — |" in tiny.text
    assert tiny.notes == []


def test_every_facts_folder_loads_and_renders() -> None:
    names = sorted(p.name for p in facts_root().iterdir() if p.is_dir())
    assert {"LA2b200s", "tiny"} <= set(names)
    for name in names:
        assert render_card(load_facts(name), results={}, weights_sha256=WEIGHTS).text


@pytest.fixture
def facts_copy(tmp_path: Path) -> Path:
    shutil.copytree(facts_root() / "tiny", tmp_path / "tiny")
    return tmp_path


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda f: (f / "evaluation.tsv").unlink(), "evaluation.tsv: missing"),
        (lambda f: (f / "evaluation.tsv").write_text("a\tb\nonly-one-cell\n"), "line 2 has 1"),
        (lambda f: (f / "LICENSE").write_text(""), "LICENSE: missing or empty"),
        (lambda f: (f / "release.yaml").write_text("name: tiny\n"), "hub_metadata"),
        (
            lambda f: (f / "evaluation.yaml").write_text(
                (f / "evaluation.yaml").read_text().replace("row: tiny (uploaded)", "row: nope")
            ),
            "measured row 'nope'",
        ),
    ],
)
def test_broken_facts_name_the_file(facts_copy: Path, edit, message: str) -> None:
    edit(facts_copy / "tiny")
    with pytest.raises(ReleaseError, match=re.escape(message)):
        load_facts("tiny", facts_copy)


def test_unknown_release_name() -> None:
    with pytest.raises(ReleaseError, match="no facts folder for release 'nope'"):
        load_facts("nope")
