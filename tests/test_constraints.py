"""The rule-based constraint extractor: exact checker specs for a table of phrasings."""

from __future__ import annotations

import time

import pytest

from rsi_hub.numbers import parse_number
from rsi_hub.serving.constraints import describe, extract_specs

CASES = [
    # word counts
    ("Describe the sea in exactly forty words.", [{"type": "word_eq", "n": 40}]),
    ("Answer in 12 words.", [{"type": "word_eq", "n": 12}]),
    ("Answer in one word.", [{"type": "word_eq", "n": 1}]),
    ("Use forty-two words exactly.", [{"type": "word_eq", "n": 42}]),
    ("Write a 50-word summary.", [{"type": "word_eq", "n": 50}]),
    ("Keep the word count at exactly 30.", [{"type": "word_eq", "n": 30}]),
    ("Write no fewer than 30 words.", [{"type": "word_min", "n": 30}]),
    ("Use no less than three sentences.", [{"type": "sent_min", "n": 3}]),
    ("Your answer needs a word count of 75.", [{"type": "word_eq", "n": 75}]),
    ("Write at least one hundred and five words.", [{"type": "word_min", "n": 105}]),
    ("Write more than 200 words.", [{"type": "word_min", "n": 201}]),
    ("Reply in no more than twenty words.", [{"type": "word_max", "n": 20}]),
    ("Reply in 40 words or fewer.", [{"type": "word_max", "n": 40}]),
    ("Respond in fewer than twenty words.", [{"type": "word_max", "n": 19}]),
    ("Keep it under 1,000 words.", [{"type": "word_max", "n": 999}]),
    ("Answer in between 40 and 60 words.", [{"type": "word_band", "lo": 40, "hi": 60}]),
    ("Use 60-40 words.", [{"type": "word_band", "lo": 40, "hi": 60}]),
    ("Use ten to twenty words.", [{"type": "word_band", "lo": 10, "hi": 20}]),
    # sentences and paragraphs
    ("Explain it in three sentences.", [{"type": "sent", "n": 3}]),
    ("Answer in a single sentence.", [{"type": "sent", "n": 1}]),
    ("Write exactly 4 sentences.", [{"type": "sent", "n": 4}]),
    ("Use at least two sentences.", [{"type": "sent_min", "n": 2}]),
    ("Use at most five sentences.", [{"type": "sent_max", "n": 5}]),
    ("Summarize in 3-5 sentences.", [{"type": "sent_min", "n": 3}, {"type": "sent_max", "n": 5}]),
    (
        "Write 2 paragraphs about cats, exactly 6 sentences in total.",
        [{"type": "para", "n": 2}, {"type": "sent", "n": 6}],
    ),
    # a word N times
    (
        'Use the word "light" exactly 3 times.',
        [{"type": "word_times", "word": "light", "n": 3}],
    ),
    (
        "Explain gravity using the word apple exactly twice.",
        [{"type": "word_times", "word": "apple", "n": 2}],
    ),
    (
        'The word "data" should appear exactly four times.',
        [{"type": "word_times", "word": "data", "n": 4}],
    ),
    (
        'Mention "Paris" once and write three sentences.',
        [{"type": "word_times", "word": "Paris", "n": 1}, {"type": "sent", "n": 3}],
    ),
    # forbidden letters, characters and words
    ("Do not use the letter e.", [{"type": "no_char", "char": "e"}]),
    ("Never use the letter 'Z'.", [{"type": "no_char", "char": "z"}]),
    (
        "Write a line without the letters a and e.",
        [{"type": "no_char", "char": "a"}, {"type": "no_char", "char": "e"}],
    ),
    ("Do not use any commas.", [{"type": "no_char", "char": ","}]),
    ("Do not use any exclamation marks.", [{"type": "no_char", "char": "!"}]),
    ("Don't use the word very.", [{"type": "no_word", "word": "very"}]),
    ("Avoid the word 'good'.", [{"type": "no_word", "word": "good"}]),
    (
        'Do not say "basically" or "literally".',
        [{"type": "no_word", "word": "basically"}, {"type": "no_word", "word": "literally"}],
    ),
    (
        "Avoid using the words big, huge and large.",
        [
            {"type": "no_word", "word": "big"},
            {"type": "no_word", "word": "huge"},
            {"type": "no_word", "word": "large"},
        ],
    ),
    # required opening and closing, required strings
    ('Start your answer with "Dear team,".', [{"type": "startswith", "text": "Dear team,"}]),
    (
        "Begin with the phrase “Once upon a time”.",
        [{"type": "startswith", "text": "Once upon a time"}],
    ),
    ("The first word must be Hello.", [{"type": "startswith", "text": "Hello"}]),
    (
        'Your response must end with the phrase "Any questions?"',
        [{"type": "endswith", "text": "Any questions?"}],
    ),
    ("Finish with 'Thank you.'", [{"type": "endswith", "text": "Thank you."}]),
    ('Include the phrase "blue sky" somewhere.', [{"type": "contains_norm", "text": "blue sky"}]),
    (
        "Include the keywords ocean and sky.",
        [{"type": "contains_norm", "text": "ocean"}, {"type": "contains_norm", "text": "sky"}],
    ),
    # formats
    ("Give exactly 4 bullet points.", [{"type": "bullet", "n": 4}]),
    ("Use a bulleted list of three items.", [{"type": "bullet", "n": 3}]),
    ("Give me a numbered list of five tips.", [{"type": "numbered", "n": 5}]),
    ("Make a markdown table with 3 rows.", [{"type": "table_rows", "n": 3}]),
    (
        'Return a JSON object with keys "name", "age" and "city".',
        [{"type": "json_keys", "keys": ["name", "age", "city"]}],
    ),
    (
        "Reply with JSON that has the keys title and year.",
        [{"type": "json_keys", "keys": ["title", "year"]}],
    ),
    ("Output a JSON array of 3 items.", [{"type": "json_array_len", "n": 3}]),
    ("Shout it in ALL CAPS.", [{"type": "is_upper"}]),
    ("Write it all in lowercase.", [{"type": "is_lower"}]),
    ("Keep it to no more than 280 characters.", [{"type": "char_max", "n": 280}]),
    ("Keep it under 100 characters.", [{"type": "char_max", "n": 99}]),
    # several at once, in reading order
    (
        'Write a haiku. Use the word "light" exactly 3 times, start with "Dawn" and end with "night."',
        [
            {"type": "word_times", "word": "light", "n": 3},
            {"type": "startswith", "text": "Dawn"},
            {"type": "endswith", "text": "night."},
        ],
    ),
    (
        "Reply in 3 sentences and under 50 words. Don't use the words very or really.",
        [
            {"type": "sent", "n": 3},
            {"type": "word_max", "n": 49},
            {"type": "no_word", "word": "very"},
            {"type": "no_word", "word": "really"},
        ],
    ),
    # nothing verifiable
    ("Tell me about words.", []),
    ("Write about the letter e in history.", []),
    ("I have 3 questions for you.", []),
    ("Write a poem about the sea, please.", []),
    ("Don't use bullet points.", []),
]


@pytest.mark.parametrize(("message", "expected"), CASES, ids=[c[0][:40] for c in CASES])
def test_extracts_exact_specs(message: str, expected: list[dict]) -> None:
    assert extract_specs(message) == expected


def test_same_constraint_stated_twice_is_listed_once() -> None:
    assert extract_specs("Use exactly 10 words. Again: exactly ten words.") == [
        {"type": "word_eq", "n": 10}
    ]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("40", 40),
        ("1,000", 1000),
        ("forty", 40),
        ("Forty-Two", 42),
        ("forty two", 42),
        ("one hundred and five", 105),
        ("two thousand and twelve", 2012),
        ("a dozen", 12),
        ("zero", 0),
        ("many", None),
        ("", None),
    ],
)
def test_parse_number(text: str, value: int | None) -> None:
    assert parse_number(text) == value


def test_every_extracted_type_has_a_label() -> None:
    specs = [spec for _, expected in CASES for spec in expected]
    labels = {spec["type"]: describe(spec) for spec in specs}
    assert all(label != kind for kind, label in labels.items())
    assert describe({"type": "word_eq", "n": 40}) == "exactly 40 words"
    assert describe({"type": "sent", "n": 1}) == "exactly 1 sentence"


def test_every_extracted_spec_is_valid_for_the_checker() -> None:
    from rsi_hub.checker import check

    specs = [spec for _, expected in CASES for spec in expected]
    verdict = check("", specs)  # raises CheckError on any malformed spec
    assert len(verdict.results) == len(specs)


def test_long_hostile_message_is_fast() -> None:
    # About the Space's input limit (8,192 tokens, ~40 KB), built from every rule's trigger words:
    # bounded patterns keep the cost linear, never a backtracking blow-up.
    unit = 'do not use the words a, b, "c" exactly twenty one words the word x '
    message = unit * (40_000 // len(unit))
    start = time.perf_counter()
    extract_specs(message)
    assert time.perf_counter() - start < 2.0
