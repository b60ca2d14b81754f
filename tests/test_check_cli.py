"""`rsi-hub check`: run in-process through rsi_hub.cli.main, on small files with known numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rsi_hub.cli import main


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


ROWS = [
    # passes both
    {
        "id": 1,
        "response": "One two three four five.",
        "checks": [{"type": "word_eq", "n": 5}, {"type": "sent", "n": 1}],
    },
    # word_eq -2
    {"id": 2, "response": "One two three.", "checks": [{"type": "word_eq", "n": 5}]},
    # word_eq +5 (wild) and no_char fails
    {
        "id": 3,
        "response": "zz b c d e f g h i j",
        "checks": [{"type": "word_eq", "n": 5}, {"type": "no_char", "char": "z"}],
    },
    # word_eq +1, sent fails
    {
        "id": "four",
        "response": "a b c d e f",
        "checks": [{"type": "word_eq", "n": 5}, {"type": "sent", "n": 1}],
    },
]


def test_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write_jsonl(tmp_path / "rows.jsonl", ROWS)
    code, out, err = run(["check", str(f)], capsys)
    assert code == 0, err
    assert out == (
        "prompts: 4, passed: 1 (25.0 %)\n"
        "\n"
        "check (checker type)  prompts carrying it  prompts failing it  miss rate\n"
        "word_eq                                 4                   3       75 %\n"
        "sent                                    2                   1       50 %\n"
        "no_char                                 1                   1      100 %\n"
        "\n"
        "word_eq near misses (of 3 failing, cumulative): |Δ| ≤ 1: 1, ≤ 2: 2, ≤ 3: 2; "
        "wild (|Δ| > 3): 1\n"
    )


def test_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = write_jsonl(tmp_path / "rows.jsonl", ROWS)
    code, out, _ = run(["check", str(f), "--json"], capsys)
    assert code == 0
    assert out.count("\n") == 1
    assert json.loads(out) == {
        "n": 4,
        "passed": 1,
        "by_type": {
            "no_char": {"carrying": 1, "failing": 1},
            "sent": {"carrying": 2, "failing": 1},
            "word_eq": {"carrying": 4, "failing": 3},
        },
        "word_eq_delta": {
            "failing": 3,
            "le1": 1,
            "le2": 2,
            "le3": 2,
            "wild": 1,
            "cumulative": True,
            "deltas": {"-2": 1, "1": 1, "5": 1},
        },
    }


def test_suite_joined_with_responses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_jsonl(
        tmp_path / "suite.jsonl",
        [
            {"id": r["id"], "prompt": "Write something.", "checks": r["checks"], "category": "x"}
            for r in ROWS
        ],
    )
    # Responses in another order, ids as text: joined on id.
    responses = write_jsonl(
        tmp_path / "responses.jsonl",
        [{"id": str(r["id"]), "response": r["response"]} for r in reversed(ROWS)],
    )
    code, out, _ = run(["check", str(suite), "--responses", str(responses), "--json"], capsys)
    assert code == 0
    got = json.loads(out)
    assert (got["n"], got["passed"]) == (4, 1)
    assert got["by_type"]["word_eq"] == {"carrying": 4, "failing": 3}


def test_many_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        {"id": i, "response": "a " * (i % 7), "checks": [{"type": "word_eq", "n": 3}]}
        for i in range(1500)
    ]
    f = write_jsonl(tmp_path / "big.jsonl", rows)
    code, out, _ = run(["check", str(f), "--json"], capsys)
    assert code == 0
    got = json.loads(out)
    assert got["n"] == 1500
    assert got["passed"] == sum(1 for i in range(1500) if i % 7 == 3)
    assert got["word_eq_delta"]["le1"] == sum(1 for i in range(1500) if i % 7 in (2, 4))


def bad(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"id": 1, "response": "a", "checks": []}\n{"id": 2, "response": \n',
            "rows.jsonl:2: invalid JSON (Expecting value at column 23)",
        ),
        ("[1, 2]\n", "rows.jsonl:1: expected a JSON object, got list"),
        ('{"response": "a", "checks": []}\n', "rows.jsonl:1: id: missing; every row needs an id"),
        (
            '{"id": 1, "checks": []}\n',
            "rows.jsonl:1: response: missing; or pass --responses R.jsonl to join a suite file "
            "with a responses file",
        ),
        ('{"id": 1, "response": 5, "checks": []}\n', "rows.jsonl:1: response: must be a string"),
        ('{"id": 1, "response": "a"}\n', "rows.jsonl:1: checks: missing"),
        (
            '\n{"id": 1, "response": "a", "checks": [{"type": "word_eq", "n": -1}]}\n',
            "rows.jsonl:2: checks[0]: constraint 0 (word_eq): parameter 'n' must be a whole number "
            ">= 0, got -1 (int)",
        ),
        (
            '{"id": 1, "response": "a", "checks": [{"type": "words", "n": 1}]}\n',
            'rows.jsonl:1: checks[0]: constraint 0: unknown type "words"',
        ),
        (
            '{"id": 1, "response": "a", "checks": {"type": "word_eq", "n": 1}}\n',
            "rows.jsonl:1: checks: checks must be a list of constraint objects",
        ),
        (
            '{"id": 1, "response": "a", "checks": []}\n{"id": 1, "response": "b", "checks": []}\n',
            "rows.jsonl:2: id: duplicate id '1' (first on line 1)",
        ),
        (
            '{"id": null, "response": "a", "checks": []}\n',
            "rows.jsonl:1: id: must be a non-empty string or an integer, got None",
        ),
    ],
)
def test_bad_rows_stop_with_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    f = bad(tmp_path, "rows.jsonl", text)
    code, out, err = run(["check", str(f)], capsys)
    assert code == 2
    assert out == ""
    assert err.startswith("rsi-hub check: error: ")
    assert message in err


def test_join_errors_name_the_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_jsonl(
        tmp_path / "suite.jsonl",
        [
            {"id": "a", "prompt": "p", "checks": []},
            {"id": "b", "prompt": "p", "checks": []},
        ],
    )
    extra = write_jsonl(
        tmp_path / "extra.jsonl",
        [
            {"id": "a", "response": "x"},
            {"id": "zz", "response": "y"},
        ],
    )
    code, _, err = run(["check", str(suite), "--responses", str(extra)], capsys)
    assert code == 2
    assert f"extra.jsonl:2: id: 'zz' is not an id of the suite {suite}" in err
    missing = write_jsonl(tmp_path / "missing.jsonl", [{"id": "a", "response": "x"}])
    code, _, err = run(["check", str(suite), "--responses", str(missing)], capsys)
    assert code == 2
    assert f"suite.jsonl:2: id: 'b' has no response in {missing}" in err
    no_resp = write_jsonl(tmp_path / "r.jsonl", [{"id": "a"}, {"id": "b", "response": "x"}])
    code, _, err = run(["check", str(suite), "--responses", str(no_resp)], capsys)
    assert code == 2
    assert "r.jsonl:1: response: missing" in err


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["check", str(tmp_path / "nope.jsonl")], capsys)
    assert code == 2
    assert "nope.jsonl: cannot read the file (No such file or directory)" in err


@pytest.mark.parametrize("content", ["", "\n  \n"])
@pytest.mark.parametrize("joined", [False, True])
def test_empty_file_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, joined: bool
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text(content, encoding="utf-8")
    argv = ["check", str(empty)]
    if joined:
        argv += ["--responses", str(write_jsonl(tmp_path / "r.jsonl", []))]
    code, out, err = run(argv, capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"rsi-hub check: error: {empty}: no rows to judge (the file is empty or only blank "
        "lines); pass a JSONL file with one row per response.\n"
    )


def test_help_lists_check(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    assert "check" in capsys.readouterr().out
