"""The pure pieces of the turn controls: parsing flags, compiling a field list, splitting inline
reasoning, extracting code blocks, the truncation rule and the usage line."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ore.backends.thinking import Answer
from ore.cli.controls import compile_fields
from ore.cli.options import optional_values, parse_keep_alive, parse_model_options
from ore.cli.present import usage_line
from ore.core import Turn
from ore.errors import OptionError
from ore.turn import extract_block, truncation
from ore.turn_types import TurnOptions
from ore.types import Message, Response


def test_options_are_typed_and_stop_collects() -> None:
    parsed = parse_model_options(["temperature=0.5", "seed=-3", "stop=a=b", "stop= x"])
    assert parsed == {"temperature": 0.5, "seed": -3, "stop": ("a=b", " x")}
    assert parse_model_options(["num_predict=-1"]) == {"num_predict": -1}
    with pytest.raises(OptionError, match="use temperature"):
        parse_model_options(["Temperature=1"])
    with pytest.raises(OptionError, match=r"known: .*temperature"):
        parse_model_options(["warmth=1"])
    with pytest.raises(OptionError, match="at least -2"):
        parse_model_options(["num_predict=-3"])
    with pytest.raises(OptionError, match="must be a number"):
        parse_model_options(["top_p=inf"])


@pytest.mark.parametrize(
    "value,parsed", [("5m", "5m"), ("0", 0), ("-1", -1), ("1h30m", "1h30m"), ("-1m", "-1m")]
)
def test_keep_alive_takes_seconds_or_durations(value: str, parsed: object) -> None:
    assert parse_keep_alive(value) == parsed


@pytest.mark.parametrize("value", ["soon", "5 minutes", "m", "1.5", ""])
def test_keep_alive_refuses_anything_else(value: str) -> None:
    with pytest.raises(OptionError):
        parse_keep_alive(value)


def test_a_bare_think_never_takes_the_prompt_for_a_level() -> None:
    assert optional_values(["--think", "why?"]) == ["--think=on", "why?"]
    assert optional_values(["--think", "high", "why?"]) == ["--think", "high", "why?"]
    assert optional_values(["x", "--think"]) == ["x", "--think=on"]
    assert optional_values(["--", "--think"]) == ["--", "--think"]


def test_a_field_list_with_newlines_may_hold_commas_in_descriptions() -> None:
    schema = compile_fields("title: the title, in full\nyear int\nok bool\nscore float")
    assert schema["properties"] == {
        "title": {"type": "string", "description": "the title, in full"},
        "year": {"type": "integer"},
        "ok": {"type": "boolean"},
        "score": {"type": "number"},
    }
    assert schema["required"] == ["title", "year", "ok", "score"]
    assert compile_fields("tags: list of short words")["properties"]["tags"] == {
        "type": "string",
        "description": "list of short words",
    }


CASES = [
    ("<think>hmm\nyes</think>\n\nThe answer.", ("The answer.", "hmm\nyes")),
    ("  <think>a</think>b", ("b", "a")),
    ("plain <think>x</think>", ("plain <think>x</think>", "")),
    ("<thinking>no", ("<thinking>no", "")),
    ("<think>never closed", ("", "never closed")),
    ("<", ("<", "")),
    ("\n\nhi", ("\n\nhi", "")),
]


@pytest.mark.parametrize("text,expected", CASES)
def test_an_inline_think_block_is_split_however_the_text_arrives(text: str, expected) -> None:
    rng = random.Random(text)
    for _ in range(40):
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text), 3)))
        answer = Answer()
        for start, end in zip([0, *cuts], [*cuts, len(text)], strict=True):
            answer.text(text[start:end])
        assert answer.finish() == expected


@given(st.text())
def test_text_not_opening_with_think_passes_through_byte_exact(text: str) -> None:
    if text.lstrip().startswith("<"):
        return
    answer = Answer()
    answer.text(text)
    assert answer.finish() == (text, "")


@pytest.mark.parametrize(
    "text,first,last",
    [
        ("```py\na\n```\nx\n```\nb\n```", "a\n", "b\n"),
        ("````\n```\ninner\n````", "```\ninner\n", "```\ninner\n"),
        ("~~~\nt\n~~~", "t\n", "t\n"),
        ("text\n```sh\nunclosed\n", "unclosed\n", "unclosed\n"),
        ("no code", "no code", "no code"),
        ("``` `not a fence`\nx", "``` `not a fence`\nx", "``` `not a fence`\nx"),
    ],
)
def test_extract_block(text: str, first: str, last: str) -> None:
    assert extract_block(text) == first
    assert extract_block(text, last=True) == last


def _turn(meta: dict, chars: int = 100, options: TurnOptions | None = None) -> Turn:
    response = Response(content="ok", model_id="m", metadata=meta)
    sent = (Message(role="user", content="x" * chars),)
    return Turn(response=response, session=None, sent=sent, options=options or TurnOptions())


def test_truncation_is_detected_by_the_documented_rule() -> None:
    assert truncation(_turn({"prompt_eval_count": 2048}, chars=96_000)) is not None
    assert "num_ctx=32768" in (truncation(_turn({"prompt_eval_count": 2048}, 96_000)) or "")
    assert truncation(_turn({"prompt_eval_count": 2048}, chars=20_000)) is None  # < 12 a token
    assert truncation(_turn({"prompt_eval_count": 500}, chars=96_000)) is None  # cached
    small = TurnOptions(options={"num_ctx": 512})
    assert truncation(_turn({"prompt_eval_count": 512}, 96_000, small)) is not None
    assert truncation(_turn({}, chars=96_000)) is None
    openai = truncation(_turn({"prompt_eval_count": 2048, "backend": "openai"}, 96_000))
    assert openai is not None and "num_ctx" not in openai


def test_the_usage_line_prefers_the_new_keys_and_falls_back_to_ollamas() -> None:
    new = {"prompt_tokens": 10, "completion_tokens": 20, "duration_ms": 2000}
    assert usage_line(_turn(new), 9.0) == "[usage] 10 tokens in, 20 out, 2.00 s, 10.0 tokens/s"
    old = {"prompt_eval_count": 5, "eval_count": 8, "total_duration": 4e9, "eval_duration": 2e9}
    assert usage_line(_turn(old), 9.0) == "[usage] 5 tokens in, 8 out, 4.00 s, 4.0 tokens/s"
    assert usage_line(_turn({}), 0.5) == "[usage] ? tokens in, ? out, 0.50 s, ? tokens/s"
