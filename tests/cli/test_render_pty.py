"""An answer streamed in small pieces onto a real pseudo-terminal: styled by ORE's own renderer,
each line shown once (nothing redrawn), escapes from the model neutralised, and the same screen
as the answer shown whole.

The pty's output translation is switched off, so the bytes read back are the bytes ORE wrote.
"""

from __future__ import annotations

import re

import pytest
from _cli import needs_ore, run_in_pty, without_progress

pytestmark = needs_ore

ANSWER = (
    "# Plan \x1b]0;pwned\x07\n\n"
    "Run **this** with `ore --raw` and *care*:\n\n"
    "- first step\n- second step \x1b[2J\n\n"
    "```python\ndef double(x):\n    return x * 2  # twice\n```\n\n"
    "> quoted \u202egnp.exe\n\n---\n\nDone \x9b31m."
)
LINES = [
    "Plan \\x1b]0;pwned\\x07",
    "Run this with ore --raw and care:",
    "• first step",
    "• second step \\x1b[2J",
    "def double(x):",
    "    return x * 2  # twice",
    "▌ quoted \\u202egnp.exe",
    "Done \\x9b31m.",
]
SGR = re.compile(rb"\x1b\[[0-9;]*m")


def terminal_env(ore_env: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in ore_env.items() if k not in ("NO_COLOR", "COLORTERM", "FORCE_COLOR")}
    return {**env, "TERM": "xterm-256color", "COLUMNS": "80", "LINES": "40"}


@pytest.fixture
def small_pieces(fake_ollama):
    fake_ollama.reply = [ANSWER[at : at + 3] for at in range(0, len(ANSWER), 3)]
    return fake_ollama


def _answer_lines(shown: bytes) -> list[str]:
    return SGR.sub(b"", without_progress(shown)).decode().splitlines()


@pytest.mark.invariant
def test_a_streamed_answer_is_styled_each_line_shown_once_and_escapes_neutral(
    small_pieces, ore_env
) -> None:
    shown = without_progress(run_in_pty(["hi"], terminal_env(ore_env), columns=80))
    assert small_pieces.chat_requests()[0]["stream"] is True
    # nothing from the model drives the terminal: every ESC starts ORE's own SGR
    assert b"\x1b" not in SGR.sub(b"", shown)
    assert not re.search("[\x80-\x9f\u2028\u2029\u202a-\u202e]", shown.decode())
    lines = _answer_lines(shown)
    for line in LINES:
        assert lines.count(line) == 1, (line, lines)
    # styled: the heading bold, the keyword coloured, the markers gone
    assert re.search(rb"\x1b\[0;1[;0-9]*mPlan", shown)
    assert re.search(rb"\x1b\[38;5;\d+mdef\x1b\[39m", shown)
    assert b"**" not in shown and b"```" not in shown and b"# Plan" not in shown
    assert b"\r" not in shown  # no line drawn over another


def test_a_whole_answer_shows_the_same_lines(small_pieces, ore_env) -> None:
    streamed = run_in_pty(["hi"], terminal_env(ore_env), columns=80)
    whole = run_in_pty(["--no-stream", "hi"], terminal_env(ore_env), columns=80)
    assert [line for line in _answer_lines(whole) if line in LINES] == LINES
    assert [line for line in _answer_lines(streamed) if line in LINES] == LINES
