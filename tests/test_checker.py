"""Tables of cases per check type (spec/checks.md), with exact verdicts and exact reasons."""

from __future__ import annotations

import json

import pytest

from rsi_hub.checker import CHECKER_VERSION, REGISTRY, CheckError, check, validate_checks
from rsi_hub.checker.analysis import failure_analysis, format_rate, render_failure_table
from rsi_hub.checker.core import Verdict

# (response, constraint, passed, reason) -- reason None: not pinned (only the verdict is).
Case = tuple[str, dict, bool, str | None]


def _run(cases: list[Case]) -> None:
    for response, constraint, passed, reason in cases:
        result = check(response, [constraint]).results[0]
        assert result.passed is passed, (response, constraint, result.reason)
        assert result.type == constraint["type"]
        if passed:
            assert result.reason == ""
        elif reason is not None:
            assert result.reason == reason, (response, constraint)


def ids(cases: list[Case]) -> list[str]:
    return [f"{c[1]['type']}-{i}" for i, c in enumerate(cases)]


WORDS: list[Case] = [
    ("one two three", {"type": "word_eq", "n": 3}, True, ""),
    ("  one two three \n", {"type": "word_eq", "n": 3}, True, ""),
    ("Don't stop, it's fine.", {"type": "word_eq", "n": 4}, True, ""),  # contractions: one word
    ("A well-known, long-term fact.", {"type": "word_eq", "n": 4}, True, ""),  # hyphens
    ("It costs 3.5 dollars.", {"type": "word_eq", "n": 4}, True, ""),  # decimals
    ("Wait ... what?!", {"type": "word_eq", "n": 3}, True, ""),  # a lone "..." is a word
    ("a\r\nb\tc\u00a0d", {"type": "word_eq", "n": 4}, True, ""),  # CRLF, tab, NBSP split
    ("", {"type": "word_eq", "n": 0}, True, ""),
    ("   \n\t ", {"type": "word_eq", "n": 0}, True, ""),
    ("one two", {"type": "word_eq", "n": 50}, False, "expected 50 words, got 2 (-48)"),
    (" ".join(["w"] * 48), {"type": "word_eq", "n": 50}, False, "expected 50 words, got 48 (-2)"),
    ("a b", {"type": "word_eq", "n": 1}, False, "expected 1 word, got 2 (+1)"),
    ("", {"type": "word_eq", "n": 3}, False, "expected 3 words, got 0 (-3)"),
    ("a b c", {"type": "word_min", "n": 3}, True, ""),
    ("a b", {"type": "word_min", "n": 3}, False, "expected at least 3 words, got 2 (-1)"),
    ("a b c", {"type": "word_max", "n": 3}, True, ""),
    ("a b c d", {"type": "word_max", "n": 3}, False, "expected at most 3 words, got 4 (+1)"),
    ("", {"type": "word_max", "n": 0}, True, ""),
    ("a b c", {"type": "word_band", "lo": 3, "hi": 5}, True, ""),
    ("a b c d e", {"type": "word_band", "lo": 3, "hi": 5}, True, ""),
    ("a b", {"type": "word_band", "lo": 3, "hi": 5}, False, "expected 3 to 5 words, got 2 (-1)"),
    ("a b c d e f g", {"type": "word_band", "lo": 3, "hi": 5}, False, None),
    ("a b c", {"type": "char_max", "n": 5}, True, ""),
    ("  a b c  ", {"type": "char_max", "n": 5}, True, ""),  # counts the stripped text
    ("abcdef", {"type": "char_max", "n": 5}, False, "expected at most 5 characters, got 6 (+1)"),
    ("ﬁ", {"type": "char_max", "n": 1}, True, ""),  # code points of t, not of N(t)
]


@pytest.mark.parametrize("case", WORDS, ids=ids(WORDS))
def test_word_counts(case: Case) -> None:
    _run([case])


WORD_MATCH: list[Case] = [
    # The spec's own example: `light` matches in `Light,` and `light-hearted`, not `lights`,
    # `delight`.
    (
        "Light, light-hearted, lights, delight.",
        {"type": "word_times", "word": "light", "n": 2},
        True,
        "",
    ),
    ("LIGHT light Light", {"type": "word_times", "word": "light", "n": 3}, True, ""),
    ("light_bulb light2 (light)", {"type": "word_times", "word": "light", "n": 1}, True, ""),
    ("Thank\nyou, thank   you!", {"type": "word_times", "word": "thank you", "n": 2}, True, ""),
    ("ha ha ha", {"type": "word_times", "word": "ha ha", "n": 1}, True, ""),  # no overlap
    ("I don’t know; don't", {"type": "word_times", "word": "don't", "n": 2}, True, ""),
    ("STRASSE straße", {"type": "word_times", "word": "Straße", "n": 2}, True, ""),  # casefold
    ("ﬁne, fine", {"type": "word_times", "word": "fine", "n": 2}, True, ""),  # NFKC
    ("", {"type": "word_times", "word": "light", "n": 0}, True, ""),
    (
        "light light",
        {"type": "word_times", "word": "light", "n": 3},
        False,
        "expected 'light' 3 times, got 2 (-1)",
    ),
    (
        "lights",
        {"type": "word_times", "word": "light", "n": 1},
        False,
        "expected 'light' 1 time, got 0 (-1)",
    ),
    ("a delight", {"type": "no_word", "word": "light"}, True, ""),
    (
        "very good",
        {"type": "no_word", "word": "very"},
        False,
        "expected no 'very', found 1 occurrence",
    ),
    (
        "Very, very, VERY",
        {"type": "no_word", "word": "very"},
        False,
        "expected no 'very', found 3 occurrences",
    ),
    ("the new york times", {"type": "no_word", "word": "New  York"}, False, None),
    ("", {"type": "no_word", "word": "x"}, True, ""),
]


@pytest.mark.parametrize("case", WORD_MATCH, ids=ids(WORD_MATCH))
def test_word_match(case: Case) -> None:
    _run([case])


def test_word_match_many_occurrences() -> None:
    # Past the short-loop threshold the regex path counts; both paths must agree.
    text = "the " * 500 + "other thea athe the_ the."
    assert check(text, [{"type": "word_times", "word": "the", "n": 501}]).passed
    assert check(text[:400], [{"type": "word_times", "word": "the", "n": 100}]).passed


SENTENCES: list[Case] = [
    ("Hello world.", {"type": "sent", "n": 1}, True, ""),
    (
        "Hello world",
        {"type": "sent", "n": 1},
        False,
        "expected 1 sentence ending in . ! or ?, got 1 but the text does not end with . ! or ?",
    ),
    ("It costs 3.5 dollars. Really.", {"type": "sent", "n": 2}, True, ""),  # decimal
    ("Wait... what?! No.", {"type": "sent", "n": 3}, True, ""),  # `...`, `?!`
    ("Really?! Yes!!! Fine...", {"type": "sent", "n": 3}, True, ""),
    ('He said "Stop." Then he left.', {"type": "sent", "n": 2}, True, ""),  # closing quote
    ("He said “Stop.” Then he left.", {"type": "sent", "n": 2}, True, ""),  # curly quote
    ("(See above.) Then go.", {"type": "sent", "n": 2}, True, ""),  # closing bracket
    ("It ends here.'", {"type": "sent", "n": 1}, True, ""),
    ("One.\r\nTwo.\r\n", {"type": "sent", "n": 2}, True, ""),  # CRLF
    ("e.g.this is one.", {"type": "sent", "n": 1}, True, ""),  # no white space: no terminator
    ("I like e.g. apples.", {"type": "sent", "n": 2}, True, ""),  # the letter of the spec
    ("... !!! ???", {"type": "sent", "n": 0}, True, ""),  # pieces without letters or digits
    ("Version 2.0.1 is out.", {"type": "sent", "n": 1}, True, ""),
    ("1. First.\n2. Second.", {"type": "sent", "n": 4}, True, ""),  # "1." then space: a piece
    # Checker 1.1: the last sentence is ended when no letter or digit follows the last . ! ?
    ("", {"type": "sent", "n": 0}, True, ""),  # an empty t: 0 sentences, passes n = 0
    ("- - -", {"type": "sent", "n": 0}, True, ""),
    ("One. Two. **Three.**", {"type": "sent", "n": 3}, True, ""),  # trailing markup
    ("Done. :)", {"type": "sent", "n": 1}, True, ""),  # an emoticon after the last sentence
    ("Really?! 🙂", {"type": "sent", "n": 1}, True, ""),
    ("*Note: done.*", {"type": "sent", "n": 1}, True, ""),
    (
        "Hello :)",
        {"type": "sent", "n": 1},
        False,
        "expected 1 sentence ending in . ! or ?, got 1 but the text does not end with . ! or ?",
    ),
    (
        "See file.txt",
        {"type": "sent", "n": 1},
        False,
        "expected 1 sentence ending in . ! or ?, got 1 but the text does not end with . ! or ?",
    ),
    (
        "It is **3.5**",
        {"type": "sent", "n": 1},
        False,
        "expected 1 sentence ending in . ! or ?, got 1 but the text does not end with . ! or ?",
    ),
    ("One. Two. Three.", {"type": "sent", "n": 2}, False, "expected 2 sentences, got 3 (+1)"),
    (
        "One. Two",
        {"type": "sent", "n": 3},
        False,
        "expected 3 sentences, got 2 (-1); the text does not end with . ! or ?",
    ),
    ("One. Two", {"type": "sent_min", "n": 2}, True, ""),
    ("One.", {"type": "sent_min", "n": 2}, False, "expected at least 2 sentences, got 1 (-1)"),
    (
        "One. Two. Three.",
        {"type": "sent_max", "n": 2},
        False,
        "expected at most 2 sentences, got 3 (+1)",
    ),
    ("", {"type": "sent_max", "n": 0}, True, ""),
]


@pytest.mark.parametrize("case", SENTENCES, ids=ids(SENTENCES))
def test_sentences(case: Case) -> None:
    _run([case])


PARAGRAPHS: list[Case] = [
    ("One.", {"type": "para", "n": 1}, True, ""),
    ("One.\nStill one.", {"type": "para", "n": 1}, True, ""),
    ("One.\n\nTwo.", {"type": "para", "n": 2}, True, ""),
    ("One.\r\n\r\nTwo.", {"type": "para", "n": 2}, True, ""),  # CRLF
    ("One.\n   \t\nTwo.\n\n\n\nThree.", {"type": "para", "n": 3}, True, ""),  # blank-ish lines
    ("\n\nOne.\n\n", {"type": "para", "n": 1}, True, ""),
    ("", {"type": "para", "n": 0}, True, ""),
    ("One.\n\nTwo.", {"type": "para", "n": 3}, False, "expected 3 paragraphs, got 2 (-1)"),
    ("One.", {"type": "para", "n": 2}, False, "expected 2 paragraphs, got 1 (-1)"),
]


@pytest.mark.parametrize("case", PARAGRAPHS, ids=ids(PARAGRAPHS))
def test_paragraphs(case: Case) -> None:
    _run([case])


STRINGS: list[Case] = [
    ("Best regards, Ann", {"type": "contains", "text": "Best regards"}, True, ""),
    ("Best\n   regards, Ann", {"type": "contains", "text": "Best regards"}, True, ""),
    ("I don’t know", {"type": "contains", "text": "don't"}, True, ""),  # curly quotes
    ("“quoted”", {"type": "contains", "text": '"quoted"'}, True, ""),
    ("ﬁne print", {"type": "contains", "text": "fine"}, True, ""),  # NFKC ligature
    ("ＡＢＣ", {"type": "contains", "text": "ABC"}, True, ""),  # NFKC full width
    ("anything", {"type": "contains", "text": ""}, True, ""),
    (
        "best regards",
        {"type": "contains", "text": "Best regards"},
        False,
        "expected to contain 'Best regards', not found (it occurs with different case)",
    ),
    ("hello", {"type": "contains", "text": "bye"}, False, "expected to contain 'bye', not found"),
    ("BEST  Regards", {"type": "contains_norm", "text": "best regards"}, True, ""),
    ("Café ＡＢＣ", {"type": "contains_norm", "text": "abc"}, True, ""),
    ("STRASSE", {"type": "contains_norm", "text": "straße"}, True, ""),
    (
        "hello",
        {"type": "contains_norm", "text": "Good Bye"},
        False,
        "expected to contain 'Good Bye' (ignoring case), not found",
    ),
    ("  Dear  Sir,\nhello", {"type": "startswith", "text": "Dear Sir,"}, True, ""),
    ("“Hi” there", {"type": "startswith", "text": '"Hi"'}, True, ""),
    (
        "dear Sir",
        {"type": "startswith", "text": "Dear"},
        False,
        "expected to start with 'Dear', starts with 'dear Sir'",
    ),
    ("Bye.\n\nBest   regards", {"type": "endswith", "text": "Best regards"}, True, ""),
    (
        "Bye. Best regards",
        {"type": "endswith", "text": "best regards"},
        False,
        "expected to end with 'best regards', ends with 'Best regards'",
    ),
    ("", {"type": "startswith", "text": "A"}, False, "expected to start with 'A', starts with ''"),
    ("Zebra", {"type": "no_char", "char": "z"}, False, "expected no 'z' (either case), found 1"),
    ("Zebra", {"type": "no_char", "char": "z", "case_sensitive": True}, True, ""),
    (
        "Zebra zoo",
        {"type": "no_char", "char": "Z", "case_sensitive": True},
        False,
        "expected no 'Z', found 1",
    ),
    ("a, b, c", {"type": "no_char", "char": ","}, False, "expected no ',', found 2"),
    ("it’s", {"type": "no_char", "char": "'"}, True, ""),  # t, not N(t)
    ("straße", {"type": "no_char", "char": "ẞ"}, False, "expected no 'ẞ' (either case), found 1"),
    ("ⓐ", {"type": "no_char", "char": "Ⓐ"}, True, ""),  # a symbol, not a letter
    ("", {"type": "no_char", "char": "a"}, True, ""),
    ("HELLO WORLD 123!", {"type": "is_upper"}, True, ""),
    ("北京 OK", {"type": "is_upper"}, True, ""),
    ("Hello", {"type": "is_upper"}, False, "expected upper-case text, found 4 lower-case letters"),
    ("123 !", {"type": "is_upper"}, False, "expected upper-case text, found no letter"),
    ("", {"type": "is_upper"}, False, "expected upper-case text, found no letter"),
    ("ÉCOLE", {"type": "is_upper"}, True, ""),
    ("École", {"type": "is_upper"}, False, "expected upper-case text, found 4 lower-case letters"),
    ("hello world 1", {"type": "is_lower"}, True, ""),
    (
        "hello World",
        {"type": "is_lower"},
        False,
        "expected lower-case text, found 1 upper-case letter",
    ),
    ("", {"type": "is_lower"}, False, "expected lower-case text, found no letter"),
]


@pytest.mark.parametrize("case", STRINGS, ids=ids(STRINGS))
def test_strings(case: Case) -> None:
    _run([case])


LISTS: list[Case] = [
    ("- a\n- b\n* c\n• d", {"type": "bullet", "n": 4}, True, ""),
    ("- a\n  - nested\n\t* tab nested", {"type": "bullet", "n": 3}, True, ""),  # nested count
    ("- a\n---\n***\n* * *\n- - -\n___", {"type": "bullet", "n": 1}, True, ""),  # rules
    ("**Bold** start\n-no space\n- yes", {"type": "bullet", "n": 1}, True, ""),
    ("- a\r\n- b\r\n", {"type": "bullet", "n": 2}, True, ""),  # CRLF
    ("Intro\n- a\n- b", {"type": "bullet", "n": 3}, False, "expected 3 bullet lines, got 2 (-1)"),
    ("", {"type": "bullet", "n": 0}, True, ""),
    ("1. a\n2. b\n3. c", {"type": "numbered", "n": 3}, True, ""),
    ("1) a\n2) b", {"type": "numbered", "n": 2}, True, ""),  # `1)` lists
    # Checker 1.1: up to 3 spaces of indentation (a CommonMark list item); 4 or a tab: not one.
    ("  1. a\n   2. b", {"type": "numbered", "n": 2}, True, ""),
    (" 1) a\n2) b", {"type": "numbered", "n": 2}, True, ""),
    ("1. a\n    1. sub\n2. b", {"type": "numbered", "n": 2}, True, ""),  # 4 spaces: nested
    ("1. a\n\t1. sub\n2. b", {"type": "numbered", "n": 2}, True, ""),  # a tab: nested
    (
        "1. a\n   1. sub\n2. b",
        {"type": "numbered", "n": 2},
        False,
        "expected 2 numbered lines, got 3 (+1)",
    ),  # 3 spaces: an item
    ("   3. a\n   4. b", {"type": "numbered_start", "k": 3}, True, ""),
    ("Cost: 1.5 kg\n1.5 kg\n2023.\n1. a", {"type": "numbered", "n": 1}, True, ""),
    (
        "1. a\n3. b",
        {"type": "numbered", "n": 2},
        False,
        "expected items numbered 1 to 2 in order, got 1, 3",
    ),
    ("1. a\n2. b", {"type": "numbered", "n": 3}, False, "expected 3 numbered lines, got 2 (-1)"),
    (
        "2. a\n1. b",
        {"type": "numbered", "n": 2},
        False,
        "expected items numbered 1 to 2 in order, got 2, 1",
    ),
    ("3. a\n4. b", {"type": "numbered_start", "k": 3}, True, ""),
    ("1) a\n2) b", {"type": "numbered_start", "k": 1}, True, ""),
    (
        "No list here.",
        {"type": "numbered_start", "k": 1},
        False,
        "expected a numbered list starting at 1, found no numbered list",
    ),
    (
        "2. a\n3. b",
        {"type": "numbered_start", "k": 1},
        False,
        "expected a numbered list starting at 1, it starts at 2",
    ),
    (
        "1. a\n2. b\n4. c",
        {"type": "numbered_start", "k": 1},
        False,
        "expected consecutive numbers from 1, got 1, 2, 4",
    ),
]


@pytest.mark.parametrize("case", LISTS, ids=ids(LISTS))
def test_lists(case: Case) -> None:
    _run([case])


TABLE = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |"
TABLES: list[Case] = [
    (TABLE, {"type": "table_rows", "n": 2}, True, ""),
    ("| a | b |\n|:---|---:|\n| 1 | 2 |", {"type": "table_rows", "n": 1}, True, ""),  # colons
    ("| a | b |\n| :-: | -- |\n| 1 | 2 |", {"type": "table_rows", "n": 1}, True, ""),
    ("|a|b\n|---|---\n|1|2", {"type": "table_rows", "n": 1}, True, ""),  # no trailing pipe
    ("Intro text.\n\n" + TABLE + "\n\nAfter.", {"type": "table_rows", "n": 2}, True, ""),
    (TABLE.replace("\n", "\r\n"), {"type": "table_rows", "n": 2}, True, ""),  # CRLF
    ("  | a |\n  |---|\n  | 1 |", {"type": "table_rows", "n": 1}, True, ""),  # indented
    (TABLE + "\n\n| x |\n|---|\n| 1 |", {"type": "table_rows", "n": 2}, True, ""),  # first
    # A |-block whose second line is no separator is not a table; the next block is.
    (
        "| a |\n| b |\n|---|\n| c |\n\n| x |\n|---|\n| 1 |\n| 2 |\n| 3 |",
        {"type": "table_rows", "n": 3},
        True,
        "",
    ),
    ("| a | b |\n|---|---|", {"type": "table_rows", "n": 0}, True, ""),
    (TABLE, {"type": "table_rows", "n": 3}, False, "expected a table with 3 data rows, got 2 (-1)"),
    (
        "| a | b |\n| 1 | 2 |",
        {"type": "table_rows", "n": 1},
        False,
        "expected a markdown table with 1 data row, found no table",
    ),
    (
        "",
        {"type": "table_rows", "n": 0},
        False,
        "expected a markdown table with 0 data rows, found no table",
    ),
]


@pytest.mark.parametrize("case", TABLES, ids=ids(TABLES))
def test_tables(case: Case) -> None:
    _run([case])


NESTED = "[" * 100_000 + "]" * 100_000
JSONS: list[Case] = [
    ('{"a": 1, "b": 2}', {"type": "json_keys", "keys": ["a", "b"]}, True, ""),
    ('```json\n{"a": 1}\n```', {"type": "json_keys", "keys": ["a"]}, True, ""),  # fenced
    ('```\n{"a": 1}\n```', {"type": "json_keys", "keys": ["a"]}, True, ""),
    ('```JSON\n{"a": 1}\n```', {"type": "json_keys", "keys": ["a"]}, True, ""),
    (
        'Here you go:\n```json\n{"a": 1}\n```\nDone.',
        {"type": "json_keys", "keys": ["a"]},
        True,
        "",
    ),  # a sentence before the fence
    (
        'Here: {"a": 1}',
        {"type": "json_keys", "keys": ["a"]},
        False,
        "expected a JSON object, got no JSON: invalid JSON (Expecting value)",
    ),
    (
        '```json\n{"a": 1}\n```\n```json\n{"b": 2}\n```',
        {"type": "json_keys", "keys": ["a"]},
        False,
        "expected a JSON object, got no JSON: 2 fenced blocks, expected JSON or exactly one",
    ),
    (
        '```python\n{"a": 1}\n```',
        {"type": "json_keys", "keys": ["a"]},
        False,
        "expected a JSON object, got no JSON: the fenced block is 'python', not JSON",
    ),
    (
        '```json\n{"a": 1}',
        {"type": "json_keys", "keys": ["a"]},
        False,
        "expected a JSON object, got no JSON: unclosed fenced block",
    ),
    ('{"a": NaN}', {"type": "json_keys", "keys": ["a"]}, False, None),  # strict JSON
    (
        '{"a": {"b": 1}}',
        {"type": "json_keys", "keys": ["a", "b"]},
        False,
        "expected a JSON object with keys 'a', 'b', missing 'b'",
    ),  # top-level keys only
    (
        "[1, 2]",
        {"type": "json_keys", "keys": ["a"]},
        False,
        "expected a JSON object, got a JSON array",
    ),
    (
        "",
        {"type": "json_keys", "keys": ["a"]},
        False,
        "expected a JSON object, got no JSON: empty response",
    ),
    ("{}", {"type": "json_keys", "keys": []}, True, ""),
    ("[]", {"type": "json_keys", "keys": []}, False, "expected a JSON object, got a JSON array"),
    ('{"x": 1}', {"type": "json_keys_any", "keys": ["a", "x"]}, True, ""),
    (
        '{"x": 1}',
        {"type": "json_keys_any", "keys": ["a", "b"]},
        False,
        "expected a JSON object with any of 'a', 'b', it has 'x'",
    ),
    (
        "{}",
        {"type": "json_keys_any", "keys": ["a"]},
        False,
        "expected a JSON object with any of 'a', it has no keys",
    ),
    ("[1, 2, 3]", {"type": "json_array_len", "n": 3}, True, ""),
    ("```json\n[]\n```", {"type": "json_array_len", "n": 0}, True, ""),
    (
        "[1, 2]",
        {"type": "json_array_len", "n": 3},
        False,
        "expected a JSON array of 3 elements, got 2 (-1)",
    ),
    (
        '{"a": 1}',
        {"type": "json_array_len", "n": 1},
        False,
        "expected a JSON array of 1 element, got a JSON object",
    ),
    # Deeply nested JSON: bounded, never a RecursionError.
    (
        NESTED,
        {"type": "json_array_len", "n": 1},
        False,
        "expected a JSON array of 1 element, got no JSON: nested deeper than 256 levels",
    ),
    (
        "[" * 300 + "]" * 300,
        {"type": "json_array_len", "n": 1},
        False,
        "expected a JSON array of 1 element, got no JSON: nested deeper than 256 levels",
    ),
    ("[" * 200 + "]" * 200, {"type": "json_array_len", "n": 1}, True, ""),
    ('{"a":' * 50_000, {"type": "json_keys", "keys": ["a"]}, False, None),
    ('{"a": 1}', {"type": "json_valid"}, True, ""),
    ("```\n[1]\n```", {"type": "json_valid"}, True, ""),
    (
        "not json",
        {"type": "json_valid"},
        False,
        "expected JSON, got no JSON: invalid JSON (Expecting value)",
    ),
]


@pytest.mark.parametrize("case", JSONS, ids=ids(JSONS))
def test_json(case: Case) -> None:
    _run([case])


NUMBERS: list[Case] = [
    ("The answer is 42.", {"type": "number_eq", "value": 42}, True, ""),
    ("First 7, then 42", {"type": "number_eq", "value": 42}, True, ""),  # the last number
    ("Total: 1,234,567", {"type": "number_eq", "value": 1234567}, True, ""),
    ("It is 3.50.", {"type": "number_eq", "value": 3.5}, True, ""),
    ("x = -3", {"type": "number_eq", "value": -3}, True, ""),
    ("x = −3", {"type": "number_eq", "value": -3}, True, ""),  # U+2212
    ("range 3-5", {"type": "number_eq", "value": 5}, True, ""),  # a hyphen, not a sign
    ("x = 3/4", {"type": "number_eq", "value": 0.75}, True, ""),
    ("about 50%", {"type": "number_eq", "value": 50}, True, ""),
    ("1e-3", {"type": "number_eq", "value": 0.001}, True, ""),
    ("0.1", {"type": "number_eq", "value": 0.1}, True, ""),  # decimal, not binary float
    ("pi is 3.14159", {"type": "number_eq", "value": 3.14, "tol": 0.01}, True, ""),
    (
        "pi is 3.2",
        {"type": "number_eq", "value": 3.14, "tol": 0.01},
        False,
        "expected 3.14 (±0.01), the last number is 3.2",
    ),
    ("H2O and x2", {"type": "number_eq", "value": 2}, False, "expected 2, found no number"),
    # Checker 1.1: what a reader reads, exactly, at any size.
    (
        "The answer is 7e12345",
        {"type": "number_eq", "value": 7},
        False,
        "expected 7, the last number is 7e12345",
    ),
    ("The answer is 7e12345", {"type": "number_eq", "value": 7 * 10**12345}, True, ""),
    ("1.5e3 and 2E+2", {"type": "number_eq", "value": 200}, True, ""),
    ("about 1.5e3", {"type": "number_eq", "value": 1500}, True, ""),
    ("9" * 400, {"type": "number_eq", "value": int("9" * 400)}, True, ""),
    (
        "1" + "0" * 399,
        {"type": "number_eq", "value": int("9" * 400)},
        False,
        f"expected {'9' * 37}..., the last number is {'1' + '0' * 56}...",
    ),
    ("9" * 400 + ".5", {"type": "number_eq", "value": int("9" * 400), "tol": 0.5}, True, ""),
    ("9" * 400 + ".5", {"type": "number_eq", "value": int("9" * 400), "tol": 0.4}, False, None),
    ("x = 1e-400", {"type": "number_eq", "value": 0, "tol": 1e-300}, True, ""),
    ("x = 1e-400", {"type": "number_eq", "value": 0}, False, None),  # tiny is not zero
    ("x = -1e-400", {"type": "number_eq", "value": 5e-324}, False, None),
    ("x = 2e99999999999999999999", {"type": "number_eq", "value": 1e308}, False, None),
    ("x = 2e-99999999999999999999", {"type": "number_eq", "value": 0, "tol": 5e-324}, True, ""),
    ("x = 1/3", {"type": "number_eq", "value": 0.333, "tol": 0.001}, True, ""),
    ("x = 1/3", {"type": "number_eq", "value": 0.333, "tol": 0.0003}, False, None),
    (
        "x = 1/0",
        {"type": "number_eq", "value": 1},
        False,
        "expected 1, the last number '1/0' is not usable",
    ),
    ("no digits", {"type": "number_eq", "value": 1}, False, "expected 1, found no number"),
    ("", {"type": "number_eq", "value": 0}, False, "expected 0, found no number"),
    ("The answer is (C).", {"type": "choice", "answer": "C"}, True, ""),
    ("**Answer:** b", {"type": "choice", "answer": "B"}, False, None),  # capitals only
    ("I think it is B", {"type": "choice", "answer": "B"}, True, ""),  # skips "I"
    ("A cat sat. So D", {"type": "choice", "answer": "D"}, True, ""),
    ("**B**", {"type": "choice", "answer": "B"}, True, ""),
    ("(A)", {"type": "choice", "answer": "A"}, True, ""),
    ("The answer is A, not B.", {"type": "choice", "answer": "A"}, True, ""),
    ("The answer is C", {"type": "choice", "answer": "B"}, False, "expected option B, found C"),
    (
        "no idea",
        {"type": "choice", "answer": "B"},
        False,
        "expected option B, found no option letter",
    ),
]


@pytest.mark.parametrize("case", NUMBERS, ids=ids(NUMBERS))
def test_numbers_and_choices(case: Case) -> None:
    _run([case])


EV4: list[Case] = [
    ("abc123", {"type": "regex", "pattern": r"\d+$"}, True, ""),
    ("ABC", {"type": "regex", "pattern": r"(?i)^abc$"}, True, ""),
    # Checker 1.1: RE2, linear for any pattern (these took seconds to hours on Python's re).
    ("a" * 30, {"type": "regex", "pattern": r"(?:a?){30}a{30}"}, True, ""),
    ("a" * 29, {"type": "regex", "pattern": r"(?:a?){30}a{30}"}, False, None),
    ("a" * 5000 + "!", {"type": "regex", "pattern": r"(a+)+b"}, False, None),
    ("a" * 5000 + "b", {"type": "regex", "pattern": r"(a+)+b"}, True, ""),
    ("ab" * 3000, {"type": "regex", "pattern": r"^(a|ab)*c"}, False, None),
    ("٣", {"type": "regex", "pattern": r"\d"}, False, None),  # RE2's \d is ASCII
    ("٣", {"type": "regex", "pattern": r"\pN"}, True, ""),
    ("end", {"type": "regex", "pattern": r"end\z"}, True, ""),
    ("x \ud800 y", {"type": "regex", "pattern": r"x . y"}, True, ""),  # a lone surrogate is
    ("x \ud800 y", {"type": "regex", "pattern": r"x \pL y"}, False, None),  # one character
    ("x é y", {"type": "regex", "pattern": r"x . y"}, True, ""),
    (
        "abc",
        {"type": "regex", "pattern": r"^\d+$"},
        False,
        "expected a match for '^\\\\d+$', found none",
    ),
    ("The capital is Paris.", {"type": "contains_any", "texts": ["paris", "Lyon"]}, True, ""),
    (
        "PARIS",
        {"type": "contains_any", "texts": ["paris"], "case_sensitive": True},
        False,
        "expected any of 'paris', found none",
    ),
    (
        '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "C"}}',
        {"type": "tool_call", "name": "get_weather", "args": ["city"]},
        True,
        "",
    ),
    (
        '{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}',
        {"type": "tool_call", "name": "get_weather", "args": ["city"]},
        True,
        "",
    ),  # OpenAI
    (
        '{"type": "function", "function": {"name": "f", "parameters": {"x": 1}}}',
        {"type": "tool_call", "name": "f", "args": ["x"]},
        True,
        "",
    ),
    (
        '{"tool_calls": [{"function": {"name": "a", "arguments": {}}}, {"name": "f", '
        '"arguments": {"x": 1}}]}',
        {"type": "tool_call", "name": "f", "args": ["x"]},
        True,
        "",
    ),
    (
        '<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>',
        {"type": "tool_call", "name": "f", "args": {"x": 1}},
        True,
        "",
    ),
    (
        'Calling it: {"name": "f", "arguments": {"x": 1}} now.',
        {"type": "tool_call", "name": "f", "args": ["x"]},
        True,
        "",
    ),
    (
        '{"name": "f", "arguments": {"x": 2}}',
        {"type": "tool_call", "name": "f", "args": {"x": 1}},
        False,
        "expected 'f' called with 'x', missing or different in the call",
    ),
    (
        '{"name": "f", "arguments": {"y": 1}}',
        {"type": "tool_call", "name": "f", "args": ["x"]},
        False,
        "expected 'f' called with 'x', missing in the call",
    ),
    (
        '{"name": "g", "arguments": {}}',
        {"type": "tool_call", "name": "f", "args": []},
        False,
        "expected a tool call to 'f', found calls to 'g'",
    ),
    (
        "I would call f.",
        {"type": "tool_call", "name": "f", "args": []},
        False,
        "expected a JSON tool call to 'f', found no tool call",
    ),
    ("I’m sorry, but I can’t help with that.", {"type": "refusal"}, True, ""),
    ("As an AI, I won't do that.", {"type": "refusal"}, True, ""),
    ("Sure! Here is how to kill a Python process: use kill.", {"type": "refusal"}, False, None),
    ("Sure! Here is how to kill a Python process.", {"type": "no_refusal"}, True, ""),
    (
        "I cannot assist with that request.",
        {"type": "no_refusal"},
        False,
        "expected no refusal, found 'i cannot'",
    ),
    ("", {"type": "no_refusal"}, False, "expected an answer, got an empty response"),
    # Only the start is read: a refusal phrase after the first 600 characters does not count.
    ("Here is the story" + " more" * 200 + ". I cannot go on.", {"type": "refusal"}, False, None),
]


@pytest.mark.parametrize("case", EV4, ids=ids(EV4))
def test_ev4(case: Case) -> None:
    _run([case])


# --- API, validation ----------------------------------------------------------------------------


def test_api_shape() -> None:
    v = check("one two", [{"type": "word_eq", "n": 2}, {"type": "no_char", "char": "z"}])
    assert v.passed is True
    assert [r.type for r in v.results] == ["word_eq", "no_char"]
    assert all(r.passed and r.reason == "" for r in v.results)
    v = check("one two", [{"type": "word_eq", "n": 50}, {"type": "no_char", "char": "o"}])
    assert v.passed is False
    assert v.results[0].detail == {"expected": 50, "got": 2, "delta": -48, "unit": "words"}
    assert check("anything", []).passed is True
    assert isinstance(CHECKER_VERSION, str) and CHECKER_VERSION


def test_verdict_round_trip() -> None:
    v = check("one", [{"type": "word_eq", "n": 3}, {"type": "sent", "n": 1}])
    again = Verdict.from_dict(json.loads(json.dumps(v.to_dict())))
    assert again == v


def test_registry_covers_spec() -> None:
    spec_if = {
        "word_eq",
        "word_min",
        "word_max",
        "word_band",
        "word_times",
        "sent",
        "sent_min",
        "sent_max",
        "para",
        "contains",
        "contains_norm",
        "no_word",
        "no_char",
        "startswith",
        "endswith",
        "bullet",
        "numbered",
        "numbered_start",
        "table_rows",
        "json_keys",
        "json_keys_any",
        "json_array_len",
        "is_upper",
        "is_lower",
        "char_max",
    }
    spec_ev4 = {
        "number_eq",
        "choice",
        "regex",
        "contains_any",
        "json_valid",
        "tool_call",
        "refusal",
        "no_refusal",
        "code_tests",
    }
    assert set(REGISTRY) == spec_if | spec_ev4
    for ct in REGISTRY.values():
        assert ct.fn.__doc__ and ct.summary


BAD: list[tuple[object, str]] = [
    (
        [{"type": "wordeq", "n": 5}],
        "constraint 0: unknown type \"wordeq\"; did you mean 'word_eq'?",
    ),
    ([{"n": 5}], "constraint 0 {\"n\": 5}: missing 'type'; add one of: "),
    (
        [{"type": "sent", "n": 1}, {"type": "word_eq"}],
        "constraint 1 (word_eq): missing parameter 'n' (a whole number >= 0); add it, "
        'e.g. {"type": "word_eq", "n": 50}',
    ),
    (
        [{"type": "word_eq", "n": "50"}],
        "constraint 0 (word_eq): parameter 'n' must be a whole number >= 0, got \"50\" (str); "
        'e.g. {"type": "word_eq", "n": 50}',
    ),
    ([{"type": "word_eq", "n": -1}], "parameter 'n' must be a whole number >= 0, got -1 (int)"),
    ([{"type": "word_eq", "n": 5.0}], "parameter 'n' must be a whole number >= 0, got 5.0"),
    ([{"type": "word_eq", "n": True}], "parameter 'n' must be a whole number >= 0, got true"),
    (
        [{"type": "word_eq", "n": 5, "count": 5}],
        'constraint 0 (word_eq): unknown parameter "count"; word_eq takes: n; remove it or fix '
        "its spelling",
    ),
    ([{"type": "word_band", "lo": 9, "hi": 3}], "'lo' (9) is greater than 'hi' (3); swap them"),
    ([{"type": "no_char", "char": "ab"}], "parameter 'char' must be a string of exactly one"),
    ([{"type": "no_char", "char": "a", "case_sensitive": "no"}], "must be true or false"),
    ([{"type": "word_times", "word": "  ", "n": 1}], "must be a non-blank string"),
    ([{"type": "json_keys_any", "keys": []}], "must be a non-empty list of strings"),
    ([{"type": "json_keys", "keys": "a"}], "must be a list of strings"),
    ([{"type": "json_keys", "keys": [1]}], "must be a list of strings"),
    ([{"type": "choice", "answer": "AB"}], "must be a single option letter A-Z"),
    # Checker 1.1: one letter A-Z; these upper-case to ASCII but are no option letters.
    ([{"type": "choice", "answer": "ß"}], "must be a single option letter A-Z"),  # "SS"
    ([{"type": "choice", "answer": "ı"}], "must be a single option letter A-Z"),  # "I"
    ([{"type": "choice", "answer": "ſ"}], "must be a single option letter A-Z"),  # "S"
    ([{"type": "choice", "answer": "1"}], "must be a single option letter A-Z"),
    ([{"type": "choice", "answer": "b"}], "must be a single option letter A-Z"),  # capitals only
    ([{"type": "regex", "pattern": "("}], "must be an RE2 regular expression"),
    ([{"type": "regex", "pattern": r"(a)\1"}], "backreferences such as \\1 are not supported"),
    ([{"type": "regex", "pattern": r"(?P<n>a)(?P=n)"}], "named backreferences (?P=name) are not"),
    ([{"type": "regex", "pattern": r"a(?=b)"}], "look-around assertions are not supported"),
    ([{"type": "regex", "pattern": r"a(?!b)"}], "look-around assertions are not supported"),
    ([{"type": "regex", "pattern": r"(?<=a)b"}], "look-around assertions are not supported"),
    ([{"type": "regex", "pattern": r"(?<!a)b"}], "look-around assertions are not supported"),
    ([{"type": "regex", "pattern": r"end\Z"}], "write \\z for the end of the text"),
    ([{"type": "regex", "pattern": r"a++"}], "possessive quantifiers are not supported"),
    ([{"type": "number_eq", "value": float("inf")}], "parameter 'value' must be a finite number"),
    (
        [{"type": "number_eq", "value": 1, "tol": -(10**5000)}],
        "parameter 'tol' must be a finite number >= 0, got <int too long to show> (int)",
    ),
    ([{"type": "number_eq", "value": "3"}], "parameter 'value' must be a finite number"),
    ([{"type": "number_eq", "value": 3, "tol": -1}], "'tol' must be a finite number >= 0"),
    ([{"type": "code_tests", "entry_point": "1f", "tests": "assert 1"}], "a Python identifier"),
    ([{"type": "code_tests", "entry_point": "f", "tests": ""}], "Python test code"),
    ([{"type": "code_tests", "entry_point": "f", "tests": "x", "timeout": 0}], "> 0 and <= 60"),
    ([{"type": "tool_call", "name": "f", "args": "x"}], "a list of argument names"),
    (["word_eq"], "constraint 0: expected an object such as"),
    ({"type": "word_eq", "n": 1}, "checks must be a list of constraint objects"),
    ("word_eq", "checks must be a list of constraint objects"),
]


@pytest.mark.parametrize(("checks", "message"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_check_error(checks: object, message: str) -> None:
    with pytest.raises(CheckError) as info:
        validate_checks(checks)  # type: ignore[arg-type]
    assert message in str(info.value)
    with pytest.raises(CheckError):
        check("some response", checks)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError)


def test_check_error_is_raised_before_judging() -> None:
    # The bad constraint is last: nothing may be judged (code_tests would spawn a process).
    checks = [
        {"type": "code_tests", "entry_point": "f", "tests": "raise SystemExit"},
        {"type": "word_eq", "n": -5},
    ]
    with pytest.raises(CheckError) as info:
        check("def f(): pass", checks)
    assert info.value.index == 1 and info.value.param == "n"
    assert info.value.check_type == "word_eq"


def test_response_must_be_str() -> None:
    with pytest.raises(TypeError):
        check(None, [{"type": "word_eq", "n": 1}])  # type: ignore[arg-type]


def test_shared_context_computes_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import rsi_hub.checker.context as context

    calls = {"sent": 0}
    real = context._SENTENCE

    class Counting:
        def findall(self, t: str) -> list[str]:
            calls["sent"] += 1
            return real.findall(t)

    monkeypatch.setattr(context, "_SENTENCE", Counting())
    check(
        "One. Two.",
        [{"type": "sent", "n": 2}, {"type": "sent_min", "n": 1}, {"type": "sent_max", "n": 3}],
    )
    assert calls["sent"] == 1


# --- failure analysis ----------------------------------------------------------------------------


def test_failure_analysis_counts_and_near_misses() -> None:
    rows = []
    for delta in (-1, 1, -2, 3, 10, -7):  # six word_eq misses: |Δ| 1, 1, 2, 3, 10, 7
        checks = [{"type": "word_eq", "n": 10 - delta}, {"type": "sent", "n": 1}]
        rows.append((checks, check("a b c d e f g h i j.", checks)))
    checks = [{"type": "word_eq", "n": 5}, {"type": "no_char", "char": "z"}]
    rows.append((checks, check("a b c d e.", checks)))  # passes
    checks = [
        {"type": "word_times", "word": "a", "n": 2},
        {"type": "word_times", "word": "b", "n": 2},
    ]
    rows.append((checks, check("a b", checks)))  # one prompt failing word_times twice
    a = failure_analysis(rows)
    assert (a.n, a.passed) == (8, 1)
    assert a.by_type["word_eq"].carrying == 7 and a.by_type["word_eq"].failing == 6
    assert a.by_type["word_times"].carrying == 1 and a.by_type["word_times"].failing == 1
    assert a.by_type["sent"].failing == 0
    d = a.word_eq_delta
    assert (d.failing, d.le1, d.le2, d.le3, d.wild) == (6, 2, 3, 4, 2)
    assert d.deltas == {-1: 1, 1: 1, -2: 1, 3: 1, 10: 1, -7: 1}
    out = a.to_json()
    assert set(out) == {"n", "passed", "by_type", "word_eq_delta"}
    assert out["by_type"]["word_eq"] == {"carrying": 7, "failing": 6}
    assert out["word_eq_delta"]["le2"] == 3 and out["word_eq_delta"]["cumulative"] is True


def test_failure_table_text() -> None:
    rows = []
    for i in range(4):
        checks = [{"type": "word_eq", "n": 3 + i}, {"type": "sent", "n": 1}]
        rows.append((checks, check("a b c.", checks)))
    text = render_failure_table(failure_analysis(rows))
    assert text == (
        "prompts: 4, passed: 1 (25.0 %)\n"
        "\n"
        "check (checker type)  prompts carrying it  prompts failing it  miss rate\n"
        "word_eq                                 4                   3       75 %\n"
        "sent                                    4                   0        0 %\n"
        "\n"
        "word_eq near misses (of 3 failing, cumulative): |Δ| ≤ 1: 1, ≤ 2: 2, ≤ 3: 3; "
        "wild (|Δ| > 3): 0\n"
    )


def test_rate_format_matches_card() -> None:
    # The card's §5 column, from its own counts.
    card = [
        (80, 86, "93 %"),
        (70, 142, "49 %"),
        (52, 603, "8.6 %"),
        (22, 113, "19 %"),
        (11, 111, "9.9 %"),
        (9, 53, "17 %"),
        (7, 90, "7.8 %"),
        (7, 100, "7.0 %"),
        (3, 88, "3.4 %"),
        (2, 7, "29 %"),
        (0, 26, "0 %"),
    ]
    for failing, carrying, shown in card:
        assert format_rate(failing, carrying) == shown


# --- hostile responses ---------------------------------------------------------------------------

HOSTILE = {
    "punctuation runs": "".join(ch * k for k in (1, 7, 5000) for ch in ".[|- ") * 60,
    "dots then letter": ("." * 4000 + "x") * 250,
    "terminators": "a.b!c?d" * 150_000,
    "bullets and rules": "- a\n* * *\n---\n  * b\n" * 50_000,
    "numbered": "".join(f"{i}. x\n" for i in range(200_000)),
    "table-ish": "| a | b |\n|:-|-:|\n" * 60_000,
    "fences": "```json\n{\n```\n" * 60_000,
    "open brackets": "[" * 1_000_000,
    "open objects": '{"a":' * 200_000,
    "digits and commas": "1,11,111,1111." * 80_000,
    "blank lines": "\n \t\r\n" * 200_000 + "x",
    "one word": "the " * 300_000,
    "tool tags": "<tool_call>" * 100_000,
    "letters": "A" * 1_000_000 + "é" * 200_000,
    "surrogates and marks": "\ud800\u0301\u200b\ufeff" * 200_000,
}


def _every_type() -> list[dict]:
    checks = []
    for name, ct in sorted(REGISTRY.items()):
        c = {"type": name}
        c.update({p.name: p.example for p in ct.params if p.required})
        if name == "word_times":
            c["word"] = "the"
        if name == "code_tests":  # needs exactly one of its two optional forms
            c["cases"] = [{"args": [1, 2], "expect": 3}]
        checks.append(c)
    return checks


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_response_is_judged_in_linear_time(name: str) -> None:
    import time

    text = HOSTILE[name]
    start = time.monotonic()
    verdict = check(text, _every_type())
    # Generous: a linear pass over ~1-2 MB takes well under a second; anything quadratic
    # would take hours. The benchmark script measures the real figure on 10 MB.
    assert time.monotonic() - start < 10
    assert len(verdict.results) == len(REGISTRY)


def test_number_edge_cases_never_raise() -> None:
    for text in ("1e9999", "1e-9999", "9" * 5000, "1/0", "0/0 is 5/0", "." * 10, "-", "1,"):
        check(text, [{"type": "number_eq", "value": 1}, {"type": "choice", "answer": "A"}])
    r = check("1e9999", [{"type": "number_eq", "value": 1}]).results[0]
    assert r.reason == "expected 1, the last number is 1e9999"
    r = check("x" + "9" * 200, [{"type": "number_eq", "value": 1}]).results[0]
    assert r.passed is False
