"""A REPL fed by a pipe reads each line within the input limit (`--max-input`,
`ORE_MAX_INPUT`): a longer line is read no further than one character past the limit and is one
error line (exit 1), before any of it is sent; the lines before it were answered as usual."""

from __future__ import annotations

import pytest
from _cli import needs_ore, run_ore

pytestmark = needs_ore


@pytest.mark.parametrize("how", ["flag", "env"])
def test_a_piped_repl_line_over_the_limit_is_one_error_line(fake_ollama, ore_env, how) -> None:
    args, env = (["--max-input", "1K"], ore_env) if how == "flag" else ([], ore_env)
    if how == "env":
        env = {**ore_env, "ORE_MAX_INPUT": "1K"}
    piped = "first\n" + "x" * 5000 + "\nnever sent\n"
    result = run_ore(*args, "-c", env=env, input=piped)
    assert result.returncode == 1
    assert result.stdout == "echo: first\n"
    lines = result.stderr.splitlines()
    assert lines == [
        "Error: a line on stdin is longer than the --max-input limit (1,024 characters); it was"
        " not sent (raise it with --max-input SIZE or ORE_MAX_INPUT, or send less)"
    ], lines
    sent = [r["messages"][-1]["content"] for r in fake_ollama.chat_requests()]
    assert sent == ["first"]


def test_a_line_of_exactly_the_limit_is_sent(fake_ollama, ore_env) -> None:
    line = "y" * 1024
    result = run_ore("--max-input", "1K", "-c", env=ore_env, input=line + "\n" + line)
    assert result.returncode == 0, result.stderr
    assert [r["messages"][-1]["content"] for r in fake_ollama.chat_requests()] == [line, line]
