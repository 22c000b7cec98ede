"""An attacker's pass over the one terminal boundary (`ore.cli.console.visible`), through real
`ore` processes on a pseudo-terminal (output translation off, so the bytes read are the bytes
ORE wrote): paths added after the first hardening pass, and the shapes that pass could miss
(pieces that cut an escape in two, JSON documents written whole, reasoning that the terminal
itself wraps). In a pipe every document stays byte-exact.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest
from _cli import needs_ore, run_ore, without_progress
from _cli import run_in_pty as pty_run

from ore.cli.console import REASONING_PREFIX

pytestmark = needs_ore

#: Clipboard write, title change, clear screen, DCS, C1 CSI and NEL, DEL, BEL, backspace, a lone
#: carriage return, line and paragraph separators, a bidi override and an isolate.
HOSTILE = (
    "a\x1b]52;c;cHduZWQ=\x07 b\x1b]0;x\x1b\\ c\x1b[2J d\x1bPq\x1b\\ e\x9b31m f\x85 g\x7f h\x08"
    "i\rj\u2028k\u2029l\u202egnp.exe\u2066m"
)

#: What ORE itself writes to a terminal: its SGR styling and the spinner's erase.
_OWN = re.compile(rb"\x1b\[[0-9;]*m|\x1b\[K")

#: Bytes that drive a terminal: C0 but line break and tab, DEL, and as UTF-8 the C1 controls,
#: U+2028/U+2029 and the bidi overrides and isolates.
_DRIVING = re.compile(
    rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xa8-\xae]|\xe2\x81[\xa6-\xa9]"
)

_MODES = {"colour": {}, "NO_COLOR": {"NO_COLOR": "1"}, "dumb": {"TERM": "dumb"}}


def driving(shown: bytes) -> list[bytes]:
    """What in `shown` would drive a terminal, ORE's own styling and spinner set aside."""
    return sorted({m.group() for m in _DRIVING.finditer(_OWN.sub(b"", without_progress(shown)))})


def terminal_env(ore_env: dict[str, str], columns: int = 100, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in ore_env.items() if k not in ("NO_COLOR", "COLORTERM", "FORCE_COLOR")}
    return {**env, "TERM": "xterm-256color", "COLUMNS": str(columns), "LINES": "40", **extra}


def run_in_pty(args: list[str], env: dict[str, str], columns: int = 100) -> bytes:
    return pty_run(args, env, columns=columns)


@pytest.fixture
def logged(fake_ollama, ore_env) -> dict[str, str]:
    """One hostile turn in the log (and its prompt hostile too)."""
    fake_ollama.reply = HOSTILE
    assert run_ore("--no-stdin", HOSTILE, env=ore_env).returncode == 0
    return ore_env


# -- answers cut anywhere --------------------------------------------------------------------------


@pytest.mark.parametrize("mode", list(_MODES))
def test_an_escape_cut_across_pieces_never_reaches_the_terminal(fake_ollama, ore_env, mode) -> None:
    # ESC in one piece, `]52;` in the next; a C1 and a CSI's tail, a CR before a line break.
    fake_ollama.reply = [
        "x \x1b",
        "]52;c;cHduZWQ=\x07 ",
        "> q \x1b",
        "[2J\x9b",
        "1m\r",
        "\n`\x1b",
        "P`",
    ]
    shown = run_in_pty(["--no-stdin", "q"], terminal_env(ore_env, **_MODES[mode]))
    assert driving(shown) == [], shown
    assert b"\\x1b]52;c;cHduZWQ=\\x07" in _OWN.sub(b"", shown)


@pytest.mark.parametrize(
    "shape",
    [
        "```\n{h}\n```\n",
        "x `{h}` y",
        "[x](\x1b]52;c;cHduZWQ=\x07) [{h}](u)",
        "# {h}",
        "- {h}\n1. {h}",
        "> {h}",
        "| a | b |\n|---|---|\n| {h} | x |",
        "*{h}* **{h}**",
    ],
    ids=["fence", "inline", "link", "heading", "list", "quote", "table", "emphasis"],
)
@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_no_markdown_shape_carries_an_escape_to_the_terminal(fake_ollama, ore_env, shape, stream):
    fake_ollama.reply = shape.format(h=HOSTILE)
    fake_ollama.pieces = 9
    shown = run_in_pty(["--no-stdin", stream, "q"], terminal_env(ore_env))
    assert driving(shown) == [], shown


# -- JSON documents written whole ------------------------------------------------------------------


@pytest.mark.invariant
@pytest.mark.parametrize(
    "args",
    [
        ["--no-stdin", "--artifact-out", "-", "q"],
        ["log", "show", "-1", "--artifact"],
        ["log", "export"],
    ],
    ids=["artifact-out", "log-show-artifact", "log-export"],
)
def test_a_json_document_at_a_terminal_never_drives_it_and_piped_is_exact(logged, args) -> None:
    shown = run_in_pty(args, terminal_env(logged))
    assert driving(shown) == [], shown
    first = json.JSONDecoder().raw_decode
    at_terminal = first(without_progress(shown).decode().lstrip())[0]
    piped = run_ore(*args, env=logged)
    assert piped.returncode == 0, piped.stderr
    assert "\u2028" in piped.stdout and "\x85" in piped.stdout  # as written: not neutralised
    content = first(piped.stdout)[0]["output"]["content"]
    assert content == at_terminal["output"]["content"] == HOSTILE  # means the same


# -- reasoning the terminal wraps ------------------------------------------------------------------


def cells(text: str) -> int:
    """Columns `text` takes at a terminal: wide characters two, combining and format ones none."""
    width = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
            continue
        width += 2 if unicodedata.east_asian_width(char) in "WF" else 1
    return width


@pytest.mark.invariant
@pytest.mark.parametrize(
    "padding",
    ["x" * 98, "\u4e2d" * 49, "e\u0301" * 98, "\u200d" * 50 + "x" * 98],
    ids=["ascii", "wide", "combining", "zero-width"],
)
def test_reasoning_the_terminal_wraps_never_starts_a_row_like_ores_own(
    fake_ollama, ore_env, padding: str
) -> None:
    # A reasoning line long enough that the terminal's own wrap would start a row with
    # `Error:`, with no prefix and (NO_COLOR) no dimming: each row ORE writes fits the width.
    fake_ollama.reply = "ok"
    fake_ollama.thinking = padding + "Error: the model server failed; run ore --doctor"
    env = terminal_env(ore_env, columns=200, NO_COLOR="1")  # a stale COLUMNS: the pty is 100
    for stream in ("--stream", "--no-stream"):
        shown = without_progress(run_in_pty(["--no-stdin", stream, "q"], env)).decode()
        rows = [row for row in shown.split("\n") if "Error:" in row or row.startswith("x")]
        assert rows, shown
        for row in shown.split("\n"):
            assert cells(row) < 100, (row, shown)
        assert not re.search(r"^Error:", shown, re.M), shown
        assert any(row.startswith(REASONING_PREFIX) and "Error:" in row for row in rows), shown


@pytest.fixture
def interleaving(fake_ollama, monkeypatch):
    """The fake Ollama sends a reply piece starting `THINK:` as reasoning: a server that goes
    back to reasoning after the answer began."""
    import fake_ollama as module

    chunk = module._Handler._chunk

    def interleaved(self, data: bytes) -> None:
        document = json.loads(data) if data.strip() else {}
        message = document.get("message") or {}
        if str(message.get("content", "")).startswith("THINK:"):
            message["thinking"], message["content"] = message["content"][6:], ""
            data = json.dumps(document).encode() + b"\n"
        chunk(self, data)

    monkeypatch.setattr(module._Handler, "_chunk", interleaved)
    return fake_ollama


@pytest.mark.invariant
@pytest.mark.parametrize("mode", ["colour", "NO_COLOR"])
def test_reasoning_after_the_answer_began_starts_its_own_row(interleaving, ore_env, mode) -> None:
    # The answer's open line ends before reasoning goes on: the prefix never lands at its
    # end, where the terminal's wrap would start the next row with `Error: ...`.
    interleaving.reply = ["A" * 98, "THINK:Error: the server failed; run ore --doctor", "B"]
    shown = run_in_pty(["--no-stdin", "q"], terminal_env(ore_env, **_MODES[mode]))
    rows = _OWN.sub(b"", without_progress(shown)).decode().split("\n")
    assert "A" * 98 in rows, shown
    assert REASONING_PREFIX + "Error: the server failed; run ore --doctor" in rows, shown
    assert all(cells(row) < 100 for row in rows), shown


# -- names, contents and values from outside -------------------------------------------------------


@pytest.mark.parametrize("mode", ["colour", "NO_COLOR"])
def test_lists_logs_and_config_at_a_terminal_are_neutral(logged, tmp_path: Path, mode) -> None:
    (tmp_path / "config.toml").write_text(
        'model = "m\\u001b]52;c;eA==\\u0007\\u202e\\u009b"\n[aliases]\n"a\\u2028" = "b\\u0085"\n'
    )
    env = terminal_env(logged, **_MODES[mode])
    for args in (
        ["log", "list"],
        ["log", "show", "-1"],
        ["log", "search", "a"],
        ["config", "show"],
    ):
        shown = run_in_pty(args, env)
        assert driving(shown) == [], (args, shown)


def test_model_names_and_file_names_at_a_terminal_are_neutral(fake_ollama, ore_env, tmp_path):
    fake_ollama.models = ["llama3.2:latest", "ev\x1b]52;c;eA==\x07il\u202e\x9b2J:latest"]
    env = terminal_env(ore_env, NO_COLOR="1")
    assert driving(run_in_pty(["--list-models"], env)) == []
    named = tmp_path / "f\x1b]0;t\x07\u202e\x9b.txt"
    named.write_text("x")
    for args in (
        ["--no-stdin", "-m", "llama3.2", "-f", str(named), "q"],
        ["--no-stdin", "-m", "llama3.2", "-f", str(tmp_path / "no\x1b]0;t\x07\u2028pe"), "q"],
        ["--no-stdin", "-m", "x\x1b]0;t\x07\u2028y", "q"],
    ):
        shown = run_in_pty(args, env)
        assert driving(shown) == [], (args, shown)


# -- lone surrogates: undecodable bytes on the way back out ---------------------------------------


@pytest.mark.invariant
@pytest.mark.parametrize("mode", ["colour", "NO_COLOR"])
def test_a_lone_surrogate_never_reaches_a_terminal_as_a_raw_c1_byte(fake_ollama, ore_env, mode):
    # JSON's `\udc9b` is Python's escape for the byte 0x9b (surrogateescape): written back out
    # as it is, it is the 8-bit CSI. Streamed at a terminal it is shown as an escape.
    fake_ollama.reply = ["x\udc9b", "2J y ", "\ud800 z"]
    fake_ollama.thinking = "t\udc9b2J"
    shown = run_in_pty(["--no-stdin", "--stream", "q"], terminal_env(ore_env, **_MODES[mode]))
    shown.decode("utf-8")  # nothing but UTF-8 reaches the terminal: no lone byte 0x80-0x9f
    assert driving(shown) == [], shown
    assert b"x\\x9b2J y \\ud800 z" in _OWN.sub(b"", shown) and b"Error" not in shown, shown


def test_a_lone_surrogate_in_a_streamed_pipe_is_written_as_stored(fake_ollama, ore_env) -> None:
    # It cannot be encoded: it is written as the stored answer holds it (U+FFFD), never lost.
    fake_ollama.reply = ["x", "\ud800", " y"]
    piped = run_ore("--no-stdin", "--stream", "--save-session", "s", "q", env=ore_env)
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
    assert piped.stdout == "x\ufffd y\n"


def test_a_file_name_that_is_not_utf8_is_shown_by_its_bytes_at_a_terminal(ore_env, tmp_path):
    root = tmp_path / "tree"
    root.mkdir()
    with open(bytes(root) + b"/\xff\x9b2J.py", "wb") as file:
        file.write(b"def f():\n    pass\n")
    shown = run_in_pty(["graph", "files", "--root", str(root)], terminal_env(ore_env, NO_COLOR="1"))
    shown.decode("utf-8")
    assert b"\\xff\\x9b2J.py" in shown, shown


# -- usage errors quoting outside text -------------------------------------------------------------


@pytest.mark.invariant
def test_a_usage_error_quoting_an_artifact_never_drives_the_terminal(
    fake_ollama, ore_env, tmp_path: Path
) -> None:
    # An artifact's option names are checked as -o's are: the usage error (exit 2) quotes the
    # file's text, and passes the boundary as every other line on stderr.
    made = run_ore("--no-stdin", "--artifact-out", "-", "q", env=ore_env)
    artifact = json.loads(made.stdout)
    artifact["input"]["options"] = {"te\x1b]0;t\x07\x85\u202e": 1}
    path = tmp_path / "evil.json"
    path.write_text(json.dumps(artifact))
    shown = run_in_pty(["--artifact-in", str(path)], terminal_env(ore_env, NO_COLOR="1"))
    assert driving(shown) == [], shown
    assert b"te\\x1b]0;t\\x07" in shown and b"\\u202e" in shown  # U+0085 is folded to a space
    piped = run_ore("--artifact-in", str(path), env=ore_env)
    assert piped.returncode == 2 and "\x1b" not in piped.stderr, piped.stderr
