"""A `--schema` check ends in bounded time whatever the schema: a `pattern` whose regular
expression backtracks exponentially runs in C, between two keywords, where the per-keyword
deadline cannot see it; an alarm stops it in the main thread, and elsewhere such a pattern is
refused before it runs. Either way one line says why, and the answer is kept."""

from __future__ import annotations

import json
import threading
import time

import pytest
from _cli import needs_ore, one_line_error, run_ore

from ore.turn import answer
from ore.turn.answer import structured

CATASTROPHIC = {"type": "string", "pattern": "^(a+)+$"}
HOSTILE_ANSWER = '"' + "a" * 60 + 'b"'


@pytest.fixture
def short_bound(monkeypatch: pytest.MonkeyPatch) -> float:
    monkeypatch.setattr(answer, "MAX_STRUCTURED_SECONDS", 0.3)
    return 0.3


def test_a_catastrophic_pattern_is_stopped_by_the_time_bound(short_bound: float) -> None:
    start = time.monotonic()
    data, why = structured(HOSTILE_ANSWER, CATASTROPHIC)
    assert time.monotonic() - start < short_bound + 2
    assert (
        data is None
        and why == "the answer could not be checked against the schema within 0.3 seconds"
    )


def test_the_alarm_is_gone_afterwards(short_bound: float) -> None:
    import signal

    before = signal.getsignal(signal.SIGALRM)
    assert structured('"aaa"', CATASTROPHIC) == ("aaa", None)
    structured(HOSTILE_ANSWER, CATASTROPHIC)
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def _in_a_thread(content: str, schema: dict[str, object]) -> tuple[object, str | None]:
    result: list[tuple[object, str | None]] = []
    worker = threading.Thread(target=lambda: result.append(structured(content, schema)))
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive()
    return result[0]


@pytest.mark.parametrize(
    "schema",
    [
        CATASTROPHIC,
        {"type": "object", "properties": {"k": {"type": "string", "pattern": "(a|aa)*c"}}},
        {"type": "object", "patternProperties": {"^(x*)*$": {}}},
        {"type": "array", "items": {"anyOf": [{"pattern": "(\\w+\\s?)+$"}]}},
    ],
)
def test_outside_the_main_thread_a_pattern_that_may_backtrack_is_refused(schema) -> None:
    data, why = _in_a_thread(HOSTILE_ANSWER, schema)
    assert data is None and why is not None
    assert "may take unbounded time" in why and "main thread" in why


def test_outside_the_main_thread_a_simple_pattern_is_checked() -> None:
    schema = {"type": "string", "pattern": "^[a-z]+-\\d{3}$"}
    assert _in_a_thread('"abc-123"', schema) == ("abc-123", None)
    data, why = _in_a_thread('"abc"', schema)
    assert data is None and why is not None and "does not match the schema" in why


@needs_ore
def test_a_catastrophic_pattern_through_ore_is_one_line_and_the_answer_kept(
    fake_ollama, ore_env
) -> None:
    fake_ollama.reply = HOSTILE_ANSWER
    start = time.monotonic()
    result = run_ore("--schema", json.dumps(CATASTROPHIC), "--json", "x", env=ore_env)
    assert time.monotonic() - start < 20
    assert result.returncode == 1
    assert "could not be checked against the schema within 5 seconds" in one_line_error(result)
    assert json.loads(result.stdout)["content"] == HOSTILE_ANSWER
