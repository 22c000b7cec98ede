"""Progress while waiting: a spinner with elapsed seconds on stderr at a terminal, erased
before the answer (streamed or whole); not one byte of it in a pipe."""

from __future__ import annotations

import re

import pytest

from tests._cli import run_in_pty, run_ore

ERASE = b"\r\x1b[K"
SPINNER = b"waiting for the model"


@pytest.mark.parametrize("stream", ["--no-stream", "--stream"])
def test_a_terminal_shows_a_spinner_until_the_answer_and_erases_it(
    ore_env, fake_ollama, stream
) -> None:
    fake_ollama.delay = 1.2
    shown = run_in_pty([stream, "hi"], ore_env)
    assert SPINNER in shown, shown
    before, _, answer = shown.rpartition(ERASE)
    assert SPINNER in before
    assert answer == b"echo: hi\n", shown[-200:]
    assert shown.rstrip(b"\n").endswith(b"echo: hi")


@pytest.mark.parametrize("stream", ["--no-stream", "--stream"])
def test_a_pipe_gets_no_spinner_byte(ore_env, fake_ollama, stream) -> None:
    fake_ollama.delay = 1.0
    result = run_ore(stream, "hi", env=ore_env)
    assert result.returncode == 0
    assert (result.stdout, result.stderr) == ("echo: hi\n", "")


def test_an_error_line_never_continues_the_spinner(ore_env, fake_ollama) -> None:
    fake_ollama.delay = 1.0
    fake_ollama.http_error = (500, {"error": "boom"})
    shown = run_in_pty(["--no-stream", "hi"], ore_env)
    lines = shown.split(ERASE)[-1]
    assert lines.startswith(b"Error: "), shown[-300:]
    assert SPINNER not in lines


def test_the_codebase_tools_cold_index_shows_on_the_spinners_line(
    ore_env, fake_ollama, tmp_path
) -> None:
    root = tmp_path / "code"
    for n in range(40):
        folder = root / f"pkg{n}"
        folder.mkdir(parents=True)
        for m in range(40):
            # each file its own text: the parser keeps its last few trees by their bytes
            body = "".join(f"def f{i}(x):\n    return x + {i * m + n}\n\n" for i in range(30))
            (folder / f"m{m}.py").write_text(f"import os\n\n{body}", encoding="utf-8")
    args = ["--tool", "codebase", "--grant", "filesystem-read", "--tool-arg", f"root={root}"]
    shown = run_in_pty([*args, "--no-stream", "q"], ore_env, timeout=120)
    assert re.search(rb"indexing \d+/1600 files \d+s", shown), shown[-300:]
    assert shown.endswith(b"\n") and b"echo: " in shown.rpartition(ERASE)[2]
    piped = run_ore(*args, "q", env=ore_env, timeout=120)
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
