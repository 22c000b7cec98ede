"""One terminal boundary (`ore.cli.console.visible`): outside text (answers shown at a terminal,
reasoning, session contents, list rows, /history) never drives the terminal; in a pipe, with
--raw, NO_COLOR or TERM=dumb, the answer stays exactly what the model sent.

Terminal-only paths run `ore` on a real pseudo-terminal, its output translation switched off so
the bytes read back are the bytes ORE wrote.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from _cli import needs_ore, run_ore, without_progress
from _cli import run_in_pty as pty_run

from ore.cli.console import REASONING_PREFIX, visible

pytestmark = needs_ore

#: Clipboard write (OSC 52), title change, clear screen, a C1 CSI, a line separator, a
#: right-to-left override, and a DCS string: none may reach a terminal as itself.
HOSTILE = (
    "copy \x1b]52;c;cHduZWQ=\x07 title \x1b]0;x\x07 clear \x1b[2J c1 \x9b31m "
    "ls \u2028 bidi \u202egnp.exe dcs \x1bPq\x1b\\ end"
)

#: Byte sequences ORE itself never writes to a terminal, and that `HOSTILE` tries to.
FORBIDDEN = [
    b"\x1b]",  # OSC: clipboard, title
    b"\x1bP",  # DCS
    b"\x1b[2J",  # clear screen
    b"\x07",  # BEL (ends an OSC)
    *(c.encode() for c in "\u2028\u2029"),  # line and paragraph separators
    *(chr(c).encode() for c in range(0x80, 0xA0)),  # C1 controls, as UTF-8
    *(chr(c).encode() for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]),  # bidi
]


def neutral(shown: bytes) -> None:
    """`shown` holds none of `FORBIDDEN`, and shows the hostile sequences as text."""
    found = [seq for seq in FORBIDDEN if seq in shown]
    assert not found, (found, shown)


def terminal_env(ore_env: dict[str, str], **extra: str) -> dict[str, str]:
    env = {k: v for k, v in ore_env.items() if k not in ("NO_COLOR", "COLORTERM", "FORCE_COLOR")}
    return {**env, "TERM": "xterm-256color", "COLUMNS": "200", "LINES": "40", **extra}


def run_in_pty(args: list[str], env: dict[str, str], typed: Sequence[str] = ()) -> bytes:
    """`ore ARGS` on a pseudo-terminal 200 wide (`_cli.run_in_pty`), the waiting spinner
    left out (`_cli.without_progress`)."""
    return without_progress(pty_run(args, env, typed, columns=200))


def plain(shown: bytes) -> str:
    """What a person reads: `shown` without ORE's own SGR styling."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode("utf-8", errors="replace"))


@pytest.fixture
def hostile(fake_ollama):
    fake_ollama.reply = HOSTILE
    return fake_ollama


# -- the one function ----------------------------------------------------------------------------


def test_visible_escapes_every_class_and_keeps_only_what_it_is_told() -> None:
    shown = visible(HOSTILE + "\u2029\u2066\x7f\r\n\t", keep="\n\t")
    assert not re.search(
        "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", shown
    )
    assert "\\x1b]52;c;" in shown and "\\x9b" in shown and "\\u2028" in shown
    assert "\\u202e" in shown and "\\u2066" in shown and "\\x7f" in shown
    assert shown.endswith("\\x0d\n\t")
    assert visible("\x9b\u2028", as_json=True) == "\\u009b\\u2028"
    document = json.dumps([HOSTILE + "\u2029\x85"], ensure_ascii=False)
    assert json.loads(visible(document, as_json=True)) == [HOSTILE + "\u2029\x85"]


def test_a_streamed_answer_reaches_the_renderer_made_visible_and_a_split_crlf_is_one_break():
    from ore.cli.present import Display, Sink

    fed: list[str] = []

    class Live:
        def feed(self, piece: str) -> None:
            fed.append(piece)

        def close(self) -> None:
            fed.append("<closed>")

    sink = Sink(Display(stream=True, echo=True, show=True, verbose=False, render=True))
    sink._live = Live()  # type: ignore[assignment]
    for piece in ["one\r", "\ntwo \x1b]0;x\x07", "\u202e\r"]:
        sink.token(piece)
    sink.close()
    assert fed == ["one", "\ntwo \\x1b]0;x\\x07", "\\u202e", "\\x0d", "<closed>"]


# -- answers ---------------------------------------------------------------------------------------


@pytest.mark.invariant
@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_an_answer_at_a_terminal_never_drives_it(hostile, ore_env, stream: str) -> None:
    shown = run_in_pty([stream, "hi"], terminal_env(ore_env))
    neutral(shown)
    text = plain(shown)
    assert "\\x1b]52;c;cHduZWQ=\\x07" in text and "\\x9b31m" in text and "\\u202egnp.exe" in text


@pytest.mark.invariant
def test_in_a_pipe_and_with_raw_the_answer_is_byte_exact(hostile, ore_env) -> None:
    assert run_ore("hi", env=terminal_env(ore_env)).stdout == HOSTILE + "\n"
    raw = run_in_pty(["--raw", "hi"], terminal_env(ore_env))
    assert raw == (HOSTILE + "\n").encode()


@pytest.mark.parametrize("extra", [{"NO_COLOR": "1"}, {"TERM": "dumb"}], ids=["NO_COLOR", "dumb"])
def test_no_color_and_a_dumb_terminal_show_plain_text_still_neutral(
    hostile, ore_env, extra: dict[str, str]
) -> None:
    # NO_COLOR and TERM=dumb turn off colour and rendering; an escape sequence is no colour.
    shown = run_in_pty(["hi"], terminal_env(ore_env, **extra))
    neutral(shown)
    assert "\\x1b]52;" in plain(shown)


def test_json_at_a_terminal_means_the_same_and_is_neutral(hostile, ore_env) -> None:
    shown = run_in_pty(["--json", "hi"], terminal_env(ore_env))
    neutral(shown)
    assert json.loads(shown)["content"] == HOSTILE


def test_an_extracted_block_at_a_terminal_is_neutral(fake_ollama, ore_env) -> None:
    fake_ollama.reply = f"see:\n```\n{HOSTILE}\n```\n"
    shown = run_in_pty(["--extract", "hi"], terminal_env(ore_env))
    neutral(shown)
    assert "\\x1b]0;x\\x07" in plain(shown)
    assert run_ore("--extract", "hi", env=ore_env).stdout == HOSTILE + "\n"


# -- reasoning -------------------------------------------------------------------------------------


@pytest.mark.invariant
def test_reasoning_never_passes_for_an_ore_line_without_colour(fake_ollama, ore_env) -> None:
    fake_ollama.thinking = "let me see\nError: the server is down\n\x1b]0;t\x07done"
    fake_ollama.reply = "ok"
    for stream in ("--stream", "--no-stream"):
        shown = run_in_pty(["--think", stream, "hi"], terminal_env(ore_env, NO_COLOR="1"))
        neutral(shown)
        lines = shown.decode().splitlines()
        assert not [line for line in lines if line.startswith("Error:")], lines
        assert f"{REASONING_PREFIX}Error: the server is down" in lines
        assert f"{REASONING_PREFIX}let me see" in lines
    piped = run_ore("--think", "-v", "hi", env=ore_env)
    assert piped.returncode == 0 and piped.stdout == "ok\n"
    assert not [line for line in piped.stderr.splitlines() if line.startswith("Error:")]
    assert f"{REASONING_PREFIX}\\x1b]0;t\\x07done" in piped.stderr.splitlines()


# -- sessions --------------------------------------------------------------------------------------


@pytest.fixture
def saved(hostile, ore_env) -> str:
    """Session `s`: a hostile prompt and a hostile answer."""
    result = run_ore("--save-session", "s", f"ask {HOSTILE}", env=ore_env)
    assert result.returncode == 0, result.stderr
    return "s"


@pytest.mark.invariant
@pytest.mark.parametrize("extra", [{}, {"NO_COLOR": "1"}], ids=["rendered", "NO_COLOR"])
def test_session_show_at_a_terminal_never_drives_it(saved, ore_env, extra) -> None:
    shown = run_in_pty(["session", "show", saved], terminal_env(ore_env, **extra))
    neutral(shown)
    assert "\\x1b]52;c;" in plain(shown)


def test_session_show_and_export_in_a_pipe_are_as_stored(saved, ore_env) -> None:
    assert HOSTILE in run_ore("session", "show", saved, env=ore_env).stdout
    assert HOSTILE in run_ore("session", "export", saved, env=ore_env).stdout
    stored = (Path(ore_env["ORE_HOME"]) / "sessions" / "s.json").read_bytes()
    exported = run_ore("session", "export", saved, "--format", "json", env=ore_env)
    assert exported.stdout.encode() == stored


@pytest.mark.parametrize("fmt", ["md", "json"])
def test_session_export_at_a_terminal_is_neutral(saved, ore_env, fmt: str) -> None:
    shown = run_in_pty(["session", "export", saved, "--format", fmt], terminal_env(ore_env))
    neutral(shown)
    if fmt == "json":
        messages = json.loads(shown)["messages"]
        assert messages[-1]["content"] == HOSTILE


def test_session_json_at_a_terminal_means_the_same_and_is_neutral(saved, ore_env) -> None:
    shown = run_in_pty(["session", "show", saved, "--json"], terminal_env(ore_env))
    neutral(shown)
    assert json.loads(shown)["messages"][-1]["content"] == HOSTILE


def test_session_list_rows_are_neutral_at_a_terminal_and_in_a_pipe(saved, ore_env) -> None:
    shown = run_in_pty(["session", "list"], terminal_env(ore_env))
    neutral(shown)
    assert "ask copy \\x1b]52;c;" in plain(shown)
    piped = run_ore("session", "list", env=ore_env)
    neutral(piped.stdout.encode())
    assert len(piped.stdout.splitlines()) == 1
    listed = run_ore("--list-sessions", env=ore_env)
    assert listed.returncode == 0 and listed.stdout.startswith("s\t")


def test_history_in_the_repl_never_drives_the_terminal(hostile, ore_env) -> None:
    shown = run_in_pty(["-c"], terminal_env(ore_env), ["hi", "/history", "/exit"])
    neutral(shown)
    text = plain(shown)
    assert text.count("\\x1b]52;c;cHduZWQ=\\x07") == 2, text  # the answer, then /history
