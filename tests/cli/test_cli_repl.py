"""The REPL's comforts, through real processes at a pseudo-terminal and in pipes: `/set` and
`/show`, Tab completion, `/help` by mode, a failed turn that keeps the conversation, and
non-ASCII input in a C locale."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import termios
import time
from pathlib import Path
from typing import Any

import pytest
from _cli import ORE, needs_ore, run_in_pty, run_ore

pytestmark = needs_ore

CONVERSATION_ONLY = ("/save", "/fork", "/history", "/clear")


def at_a_terminal(env: dict[str, str], **extra: str) -> dict[str, str]:
    return {**env, "TERM": "xterm-256color", **extra}


def text(shown: bytes) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode("utf-8", errors="replace"))


def users(fake: Any) -> list[str]:
    return [r["messages"][-1]["content"] for r in fake.chat_requests()]


def test_set_then_show_at_a_terminal_and_the_next_turn_carries_it(fake_ollama, ore_env) -> None:
    typed = [
        "/set option temperature=0.3",
        "/set think high",
        "/set system Be brief.",
        "/set model qwen2.5:0.5b",
        "/show",
        "hi",
        "/exit",
    ]
    shown = text(run_in_pty(["-c", "--raw"], at_a_terminal(ore_env), typed))
    assert "model: qwen2.5:0.5b" in shown and "backend: ollama" in shown
    assert "options: temperature=0.3, think=high" in shown and "system: Be brief." in shown
    assert "session: not saved (0 turns in memory" in shown
    (sent,) = fake_ollama.chat_requests()
    assert sent["model"] == "qwen2.5:0.5b" and sent["options"] == {"temperature": 0.3}
    assert sent["think"] == "high"
    assert sent["messages"][0] == {"role": "system", "content": "Be brief."}


def test_set_option_replaces_the_flags_value_and_think_off_asks_for_none(
    fake_ollama, ore_env
) -> None:
    script = "/set option temperature=0.9\n/set think off\none\n"
    result = run_ore("-c", "-o", "temperature=0.1", "--think", "low", env=ore_env, input=script)
    assert result.returncode == 0, result.stderr
    (sent,) = fake_ollama.chat_requests()
    assert sent["options"] == {"temperature": 0.9} and sent["think"] is False


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("/set option warmth=1", "-o 'warmth' is not an option"),
        ("/set option temperature=9", "between 0 and 2"),
        ("/set think extreme", "low, medium, high, on or off"),
        ("/set colour red", "/set needs WHAT VALUE"),
    ],
)
def test_set_refuses_what_the_command_line_refuses_and_changes_nothing(
    fake_ollama, ore_env, line: str, words: str
) -> None:
    result = run_ore("-c", env=ore_env, input=f"{line}\n/show\none\n")
    assert result.returncode == 2  # a piped REPL stops at the mistake
    assert words in result.stderr and "Traceback" not in result.stderr
    assert fake_ollama.chat_requests() == []


def test_tab_completes_slash_commands_and_session_names(fake_ollama, ore_env) -> None:
    assert run_ore("--save-session", "work-b", "hi", env=ore_env).returncode == 0
    fake_ollama.clear_requests()
    typed = ["/sh\t", "/save wo\t", "/set th\tl\t", "/exit"]
    shown = text(run_in_pty(["-c", "--raw"], at_a_terminal(ore_env), typed))
    assert "> /show \nmodel: llama3.2:latest" in shown  # /sh<Tab> ran /show
    assert "> /save work-b \nError: a session named 'work-b' already exists" in shown
    assert "> /set think low \nthinking: low" in shown
    assert fake_ollama.chat_requests() == []


@pytest.mark.parametrize("mode", ["-i", "-c"])
def test_help_lists_only_what_works_in_the_mode(fake_ollama, ore_env, mode: str) -> None:
    result = run_ore(mode, env=ore_env, input="/help\n")
    assert result.returncode == 0, result.stderr
    listed = {line.split()[0] for line in result.stderr.splitlines() if line.startswith("/")}
    assert {"/help", "/show", "/set", "/model", "/system", "/exit"} <= listed
    assert (set(CONVERSATION_ONLY) <= listed) is (mode == "-c")
    assert not (set(CONVERSATION_ONLY) & listed) or mode == "-c"


@pytest.fixture
def drops_after_two(fake_ollama):
    """A server whose connection breaks from the third turn on (the server went down)."""
    calls: list[int] = []

    def reply(body: dict[str, Any]) -> str:
        calls.append(1)
        if len(calls) == 2:
            fake_ollama.drop_connection = True  # from the next request on
        return "echo: " + body["messages"][-1]["content"]

    fake_ollama.reply = reply
    return fake_ollama


def test_a_failed_turn_keeps_the_conversation_in_memory_and_save_keeps_it(
    drops_after_two, ore_env
) -> None:
    typed = ["one", "two", "three", "/show", "/save kept", "/exit"]
    shown = text(run_in_pty(["-c", "--raw"], at_a_terminal(ore_env), typed))
    assert "Error: " in shown
    assert "the conversation so far (2 turns) is kept in memory" in shown
    assert "/save NAME keeps it" in shown and "saved as 'kept'" in shown
    data = json.loads((Path(ore_env["ORE_HOME"]) / "sessions" / "kept.json").read_text())
    assert [m["content"] for m in data["messages"] if m["role"] == "user"] == ["one", "two"]
    assert "not saved after a failed turn" not in shown


def test_leaving_unsaved_after_a_failed_turn_says_so(drops_after_two, ore_env) -> None:
    shown = text(
        run_in_pty(["-c", "--raw"], at_a_terminal(ore_env), ["one", "two", "three", "/exit"])
    )
    assert "2 turns not saved after a failed turn: exit 1" in shown


@pytest.mark.invariant
def test_non_ascii_typed_in_a_c_locale_arrives_as_typed_never_as_history(
    fake_ollama, ore_env
) -> None:
    env = {k: v for k, v in ore_env.items() if not k.startswith(("LC_", "LANG"))}
    (Path(ore_env["ORE_HOME"]) / "history").write_text("secret earlier prompt\n")
    typed = ["secret earlier prompt", "über", "ÿ and ü", "/exit"]
    run_in_pty(["-c", "--raw"], at_a_terminal(env, LC_ALL="POSIX"), typed)
    assert users(fake_ollama) == ["secret earlier prompt", "über", "ÿ and ü"]


def test_ctrl_d_inside_an_unfinished_prompt_says_it_was_not_sent(fake_ollama, ore_env) -> None:
    typed = ['"""', "a first line of many", "\x04"]
    shown = text(run_in_pty(["-c", "--raw"], at_a_terminal(ore_env), typed))
    assert "Warning: the REPL ended inside an unfinished prompt" in shown, shown
    assert fake_ollama.chat_requests() == []


def _typed_with_output_piped(
    env: dict[str, str], typed: list[bytes], *, canonical: bool = True
) -> tuple[int, bytes, str]:
    """`ore -c` with stdin a terminal and stdout a pipe (`ore -c | tee log`): no line editor
    runs. Each of `typed` is written as a terminal delivers a paste (in pieces), then Ctrl-D.
    Returns the exit code, stdout and stderr."""
    master, slave = pty.openpty()
    if not canonical:  # `stty -icanon`: the terminal passes keys on as they come
        attrs = termios.tcgetattr(slave)
        attrs[3] &= ~termios.ICANON
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
    proc = subprocess.Popen(
        [str(ORE), "-c"],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=at_a_terminal(env),
        start_new_session=True,
    )
    os.close(slave)
    try:
        time.sleep(0.5)
        for text in typed:
            for at in range(0, len(text), 1000):
                os.write(master, text[at : at + 1000])
                time.sleep(0.02)
            time.sleep(0.3)
        os.write(master, b"\x04")
        if not canonical:
            os.close(master)  # no line discipline to make Ctrl-D an end: hang the terminal up
            master = -1
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if master >= 0:
            os.close(master)
    return proc.returncode, out, err.decode()


def test_a_line_the_terminal_cut_is_refused_with_a_warning_and_the_repl_goes_on(
    fake_ollama, ore_env
) -> None:
    """With ore's output not a terminal there is no line editor, and a terminal in canonical
    mode hands a reader at most 4,095 bytes of a line: a longer paste arrives cut. It is said,
    and nothing of it is sent; the next line is."""
    code, out, err = _typed_with_output_piped(ore_env, [b"x" * 10_000 + b"\n", b"short\n"])
    assert code == 0
    assert "the terminal passes on at most 4,095 bytes" in err
    assert users(fake_ollama) == ["short"]
    assert out == b"echo: short\n"


def test_a_long_line_from_a_terminal_not_in_canonical_mode_is_sent_whole(
    fake_ollama, ore_env
) -> None:
    _code, _out, err = _typed_with_output_piped(ore_env, [b"y" * 5_000 + b"\n"], canonical=False)
    assert "4,095" not in err
    assert users(fake_ollama) == ["y" * 5_000]


def test_a_prompt_spans_lines_when_a_person_types_though_the_output_is_piped(
    fake_ollama, ore_env
) -> None:
    typed = [b'"""\n', b"line one\n", b"line two\n", b'"""\n', b"a \\\n", b"b\n"]
    code, _out, _err = _typed_with_output_piped(ore_env, typed)
    assert code == 0
    assert users(fake_ollama) == ["line one\nline two", "a \nb"]


@pytest.mark.invariant
def test_ctrl_c_ends_a_repl_reading_a_script_with_130(fake_ollama, ore_env) -> None:
    """At a terminal Ctrl-C cancels one reply; a REPL fed by a pipe is a script, which SIGINT
    ends as it ends any command, so the pipeline sees that the answers are missing."""
    fake_ollama.delay = 30.0
    proc = subprocess.Popen(
        [str(ORE), "-c"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ore_env,
    )
    assert proc.stdin is not None
    proc.stdin.write(b"first\nsecond\n")
    proc.stdin.close()
    proc.stdin = None  # closed: communicate() has nothing to send
    deadline = time.monotonic() + 20
    while not fake_ollama.chat_requests() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    try:
        out, _err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    assert out == b""
    assert len(fake_ollama.chat_requests()) == 1  # "second" was never sent
