"""`--help` in sections wrapped to the terminal, `-h` everywhere, `ore help [TOPIC]`, and one
error voice: every usage mistake exit 2 in click's usage shape with the valid choices, every
runtime failure one line, exit 1."""

from __future__ import annotations

import pytest
from _cli import needs_ore, one_line_error, run_ore, usage_error

pytestmark = needs_ore

SECTIONS = [
    "Input:",
    "Model and options:",
    "Output:",
    "Sessions:",
    "Tools and skills:",
    "Artifacts:",
    "Other options:",
]


def test_help_is_in_sections_in_order_with_every_flag_once(ore_env) -> None:
    text = run_ore("--help", env=ore_env).stdout
    found = [line for line in text.splitlines() if line in SECTIONS]
    assert found == SECTIONS, text
    assert "\nOptions:" not in text
    other = text[text.index("Other options:") :]
    assert "--version" in other and "-h, --help" in other
    for flag in ("--model", "--save-session", "--tool-arg", "--artifact-out", "--no-stdin"):
        assert text.count(f"{flag} ") + text.count(f"{flag},") >= 1, flag
        assert other.find(f" {flag} ") == -1, flag


@pytest.mark.parametrize("columns", [80, 120])
def test_help_wraps_to_the_terminal_width(ore_env, columns: int) -> None:
    text = run_ore("--help", env={**ore_env, "COLUMNS": str(columns)}).stdout
    widths = [len(line) for line in text.splitlines()]
    assert max(widths) <= columns and max(widths) > columns - 12


@pytest.mark.parametrize(
    "args",
    [
        ["-h"],
        ["graph", "-h"],
        ["graph", "top-files", "-h"],
        ["graph", "duplicates", "-h"],
        ["session", "-h"],
        ["session", "list", "-h"],
        ["schema", "-h"],
        ["schema", "artifact", "-h"],
        ["skill", "-h"],
        ["skill", "validate", "-h"],
        ["log", "-h"],
        ["mcp", "-h"],
    ],
    ids=" ".join,
)
def test_dash_h_works_everywhere(ore_env, args: list[str]) -> None:
    result = run_ore(*args, env=ore_env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Usage: ore")


@pytest.mark.parametrize(
    ("topic", "usage"),
    [
        ([], "Usage: ore [OPTIONS] [PROMPT]"),
        (["graph"], "Usage: ore graph [OPTIONS] COMMAND"),
        (["graph", "top-files"], "Usage: ore graph top-files"),
        (["session"], "Usage: ore session [OPTIONS] COMMAND"),
        (["session", "fork"], "Usage: ore session fork"),
    ],
    ids=lambda t: " ".join(t) if isinstance(t, list) else "",
)
def test_ore_help_topic_shows_help_and_calls_no_model(
    fake_ollama, ore_env, topic: list[str], usage: str
) -> None:
    result = run_ore("help", *topic, env=ore_env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(usage)
    assert fake_ollama.requests == []


def test_ore_help_of_an_unknown_topic_is_a_usage_error(fake_ollama, ore_env) -> None:
    line = usage_error(run_ore("help", "nosuch", env=ore_env))
    assert "'nosuch'" in line and "graph, " in line and "session" in line
    assert fake_ollama.requests == []


@pytest.mark.parametrize(
    ("args", "env", "words"),
    [
        (["--bogus", "q"], {}, ["--bogus"]),
        (["--history", "x", "--continue", "q"], {}, ["--history"]),
        (["--backend", "nope", "q"], {}, ["--backend", "ollama", "deepseek"]),
        (["-o", "warmth=1", "q"], {}, ["-o 'warmth'", "temperature"]),
        (["--tool", "echo", "--tool-arg", "x", "q"], {}, ["--tool-arg", "KEY=VALUE"]),
        (["--tool", "nosuch", "q"], {}, ["--tool", "codebase, echo, read-file"]),
        (
            ["--tool", "read-file", "--tool-arg", "zz=1", "q"],
            {},
            ["--tool-arg zz", "it accepts: path"],
        ),
        (["--grant", "fs-read", "q"], {}, ["--grant", "filesystem-read, filesystem-write"]),
        (["--think", "extreme", "q"], {}, ["--think 'extreme'", "low, medium, high"]),
        (["--think=extreme", "q"], {}, ["--think 'extreme'", "low, medium, high"]),
        (["--keep-alive", "soon", "q"], {}, ["--keep-alive", "5m"]),
        (["q"], {"ORE_TIMEOUT": "abc"}, ["ORE_TIMEOUT", "--timeout"]),
        (["q"], {"ORE_TIMEOUT": "-1"}, ["ORE_TIMEOUT", "--timeout"]),
        (["q"], {"ORE_MAX_SIZE": "lots"}, ["ORE_MAX_SIZE", "--max-size", "64M"]),
        (["q"], {"ORE_BACKEND": "nope"}, ["ORE_BACKEND", "ollama", "deepseek"]),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else "",
)
def test_every_usage_mistake_is_exit_2_in_one_shape_with_the_choices(
    fake_ollama, ore_env, args: list[str], env: dict[str, str], words: list[str]
) -> None:
    line = usage_error(run_ore(*args, env={**ore_env, **env}))
    for word in words:
        assert word in line, (word, line)
    assert "'--" not in line  # flags are quoted one way: not at all
    assert fake_ollama.requests == []


def test_a_flag_given_on_the_command_line_is_named_as_the_flag(fake_ollama, ore_env) -> None:
    line = usage_error(run_ore("--timeout", "abc", "q", env={**ore_env, "ORE_TIMEOUT": "5"}))
    assert "--timeout" in line and "ORE_TIMEOUT" not in line


def test_a_runtime_failure_is_one_line_exit_1_and_sizes_read_as_words(fake_ollama, ore_env) -> None:
    result = run_ore("--max-size", "1", "hi", env=ore_env)
    assert result.returncode == 1
    line = one_line_error(result)
    assert "grew past 1 byte;" in line and "1 bytes" not in line
