"""What a person at a terminal sees, driven through a real pseudo-terminal (and tmux when it is
installed): answers rendered as Markdown, byte-exact answers everywhere else, multi-line input.

The pty's output translation (`\\n` to `\\r\\n`) is switched off, so the bytes read back are the
bytes ORE wrote.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from _cli import ORE, needs_ore, run_ore, without_progress
from _cli import run_in_pty as _pty

pytestmark = needs_ore


def run_in_pty(*args: Any, **kwargs: Any) -> bytes:
    """`_cli.run_in_pty` without the waiting spinner (these tests check exact bytes)."""
    return without_progress(_pty(*args, **kwargs))


ANSWER = (
    "# Steps\n\nRun **this**:\n\n- one\n- two\n\n"
    "```python\ndef double(x):\n    return x * 2\n```\n\nDone."
)
#: A foreground colour (256-colour or truecolor) switched on right before `def`: highlighted.
HIGHLIGHTED_DEF = re.compile(rb"\x1b\[[0-9;]*38;[25];[0-9;]*mdef")


def terminal_env(ore_env: dict[str, str], **extra: str) -> dict[str, str]:
    env = {k: v for k, v in ore_env.items() if k not in ("NO_COLOR", "COLORTERM", "FORCE_COLOR")}
    return {**env, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "40", **extra}


@pytest.fixture
def markdown_reply(fake_ollama):
    fake_ollama.reply = ANSWER
    return fake_ollama


@pytest.mark.invariant
def test_at_a_terminal_code_is_highlighted_without_fences_and_piped_it_is_byte_exact(
    markdown_reply, ore_env
) -> None:
    env = terminal_env(ore_env)
    shown = run_in_pty(["hi"], env)
    assert b"```" not in shown and b"def" in shown and b"**" not in shown
    assert HIGHLIGHTED_DEF.search(shown), shown
    piped = run_ore("hi", env=env)
    assert piped.stdout == ANSWER + "\n"
    assert [r["stream"] for r in markdown_reply.chat_requests()] == [True, False]


def test_a_whole_answer_at_a_terminal_is_rendered_too(markdown_reply, ore_env) -> None:
    shown = run_in_pty(["--no-stream", "hi"], terminal_env(ore_env))
    assert b"```" not in shown and HIGHLIGHTED_DEF.search(shown)


@pytest.mark.parametrize(
    ("flag", "extra"),
    [("--raw", {}), (None, {"NO_COLOR": "1"}), (None, {"TERM": "dumb"})],
    ids=["raw", "NO_COLOR", "TERM=dumb"],
)
def test_raw_no_color_and_a_dumb_terminal_get_the_exact_bytes(
    markdown_reply, ore_env, flag: str | None, extra: dict[str, str]
) -> None:
    args = [flag, "hi"] if flag else ["hi"]
    assert run_in_pty(args, terminal_env(ore_env, **extra)) == (ANSWER + "\n").encode()


def test_json_at_a_terminal_is_not_rendered(markdown_reply, ore_env) -> None:
    shown = run_in_pty(["--json", "hi"], terminal_env(ore_env))
    assert json.loads(shown)["content"] == ANSWER


@pytest.mark.invariant
def test_rendering_never_changes_what_is_stored(markdown_reply, ore_env) -> None:
    run_in_pty(["--save-session", "s", "hi"], terminal_env(ore_env))
    data = json.loads((Path(ore_env["ORE_HOME"]) / "sessions" / "s.json").read_text())
    assert [m["content"] for m in data["messages"]] == ["hi", ANSWER]


def test_session_show_renders_at_a_terminal(markdown_reply, ore_env) -> None:
    assert run_ore("--save-session", "s", "hi", env=ore_env).returncode == 0
    shown = run_in_pty(["session", "show", "s"], terminal_env(ore_env))
    assert b"```" not in shown and b"## User" not in shown and HIGHLIGHTED_DEF.search(shown)


def test_multi_line_input_at_a_terminal(fake_ollama, ore_env) -> None:
    typed = ["first line \\", "second line", '"""', "/not a command", "  indented", '"""', "/exit"]
    out = run_in_pty(["-c", "--raw"], terminal_env(ore_env), typed)
    users = [r["messages"][-1]["content"] for r in fake_ollama.chat_requests()]
    assert users == ["first line \nsecond line", "/not a command\n  indented"], out
    assert b"... " in out  # the continuation prompt


def test_slash_commands_at_a_terminal_repl(fake_ollama, ore_env) -> None:
    typed = ["/model qwen2.5:0.5b", "hi", "/model nosuch", "again", "/model llama3.2", "more"]
    out = run_in_pty(["-c", "--raw"], terminal_env(ore_env), [*typed, "/exit"])
    assert [r["model"] for r in fake_ollama.chat_requests()] == [
        "qwen2.5:0.5b",
        "nosuch",
        "llama3.2",
    ]
    assert b"echo: more" in out  # a missing model set by /model did not end the REPL


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_screen_in_tmux_shows_highlighted_code_without_fences(markdown_reply, ore_env) -> None:
    env = terminal_env(ore_env)
    socket = f"ore-test-{uuid.uuid4().hex[:8]}"  # a private tmux server, ended below
    tmux = ["tmux", "-L", socket]
    command = f"{ORE} hi; sleep 60"
    subprocess.run(
        [*tmux, "new-session", "-d", "-x", "100", "-y", "40", command], env=env, check=True
    )
    try:
        deadline = time.monotonic() + 20
        screen = ""
        while time.monotonic() < deadline and "Done." not in screen:
            time.sleep(0.2)
            screen = subprocess.run(
                [*tmux, "capture-pane", "-p"], capture_output=True, text=True, env=env
            ).stdout
        coloured = subprocess.run(
            [*tmux, "capture-pane", "-p", "-e"], capture_output=True, env=env
        ).stdout
    finally:
        subprocess.run([*tmux, "kill-server"], env=env, capture_output=True)
    assert "Done." in screen and "def double(x):" in screen
    assert "```" not in screen and "**" not in screen and "# Steps" not in screen
    assert HIGHLIGHTED_DEF.search(coloured), coloured
