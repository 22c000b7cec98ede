"""Commands that call no model must not import the heavy libraries (start-up time is measured in
bench/loop_bench.py; this guards the cause: what gets imported)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HEAVY = ("ollama", "httpx", "networkx", "tree_sitter", "jsonschema", "yaml", "pydantic")
#: Markdown rendering at a terminal: never loaded for a pipe.
RENDERING = ("rich", "markdown_it", "pygments")

PROBE = """
import json, sys
from ore.cli import main
try:
    main(json.loads(sys.argv[1]))
except SystemExit:
    pass
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print(json.dumps(heavy), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--version"],
        ["--list-tools"],
        ["--list-skills"],
        ["--list-sessions"],
        ["--dry-run", "--model", "m", "hi"],
        ["graph", "--help"],
        ["session", "--help"],
        ["session", "list"],
        ["session", "list", "--json"],
        ["session", "show", "nosuch"],
        ["config", "path"],
        ["config", "show"],
        ["models", "default"],
        ["models", "aliases"],
    ],
    ids=lambda a: " ".join(a),
)
def test_commands_that_call_no_model_import_nothing_heavy(args: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY + RENDERING), json.dumps(args)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    imported = json.loads(result.stderr.strip().splitlines()[-1])
    assert imported == [], result.stderr


def test_the_probe_sees_the_client_when_a_model_is_called() -> None:
    env = {"OLLAMA_HOST": "127.0.0.1:9", "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), json.dumps(["hi"])],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    assert "ollama" in json.loads(result.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "args", [["hi"], ["--stream", "hi"], ["-c"]], ids=["turn", "streamed", "repl"]
)
def test_a_turn_in_a_pipe_imports_no_rendering_library(fake_ollama, args: list[str]) -> None:
    env = {
        "OLLAMA_HOST": fake_ollama.host,
        "PATH": "/usr/bin:/bin",
        "TERM": "xterm-256color",
        "ORE_HOME": os.environ["ORE_HOME"],
    }
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY + RENDERING), json.dumps(args)],
        capture_output=True,
        text=True,
        input="hello\n",
        env=env,
    )
    assert "echo: hi" in result.stdout or "echo: hello" in result.stdout, result.stderr
    imported = json.loads(result.stderr.strip().splitlines()[-1])
    assert "ollama" in imported and not set(imported) & set(RENDERING), imported


def test_a_logged_turn_loads_the_turns_side_of_the_log_not_the_commands(fake_ollama) -> None:
    """A turn (and `--continue`) calls `ore.cli.turn_logging`; the `ore log` commands
    (`ore.cli.log`) load only for `ore log`."""
    env = {
        "OLLAMA_HOST": fake_ollama.host,
        "PATH": "/usr/bin:/bin",
        "ORE_HOME": os.environ["ORE_HOME"],
    }
    probe = PROBE.format(heavy=("ore.cli.log", "ore.cli.turn_logging"))
    for args in (["hi"], ["--continue", "again"]):
        result = subprocess.run(
            [sys.executable, "-c", probe, json.dumps(args)],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        assert "echo: " in result.stdout, result.stderr
        imported = json.loads(result.stderr.strip().splitlines()[-1])
        assert imported == ["ore.cli.turn_logging"], (args, imported)


#: What a turn's start (the dry run builds the whole request) does without, each 1-4 ms of it
#: (bench/README.md): `pathlib` (with `urllib.parse` and `ipaddress`) when there is no config
#: file, `base64`, and `difflib` (click loads it for a mistake, or for a short flag such as -m).
NOT_AT_A_TURNS_START = ("pathlib", "urllib.parse", "ipaddress", "base64", "difflib")


def test_a_dry_run_loads_no_pathlib_urllib_or_difflib(tmp_path) -> None:
    """Without `site` (an editable install's finder imports pathlib itself), ORE and click
    found through PYTHONPATH: what is loaded is what ORE and click load."""
    import sysconfig
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {
        "PYTHONPATH": os.pathsep.join([str(root), sysconfig.get_paths()["purelib"]]),
        "ORE_HOME": str(tmp_path),
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }
    args = ["--dry-run", "--model", "m", "hi"]
    result = subprocess.run(
        [sys.executable, "-S", "-c", PROBE.format(heavy=NOT_AT_A_TURNS_START), json.dumps(args)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    assert '"model": "m"' in result.stdout, result.stderr
    assert json.loads(result.stderr.strip().splitlines()[-1]) == []
