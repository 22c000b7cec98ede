"""An outside tester's pass over the turn log (issue 23), each case a real `ore` process against
the loopback Ollama imitation: out-of-range numbers and dates, columns of an edited log reaching
a terminal, and `--continue` from a one-shot whose derived session name is already taken."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from _cli import needs_ore, one_line_error, run_in_pty, run_ore

pytestmark = needs_ore

HUGE = "99999999999999999999999"


def ore(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_ore(*args, env=env, timeout=60)


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return result


@pytest.mark.parametrize(
    "args",
    [
        ("log", "show", HUGE),
        ("log", "show", f"-{HUGE}"),
        ("log", "rm", HUGE),
        ("--artifact-in", f"log:{HUGE}"),
        ("--artifact-in", f"log:-{HUGE}"),
    ],
)
def test_a_turn_id_past_sqlite_integers_is_no_such_turn(fake_ollama, ore_env, args) -> None:
    ok(ore("a turn", env=ore_env))
    result = ore(*args, env=ore_env)
    assert result.returncode == 1
    assert "no " in one_line_error(result)
    assert len(fake_ollama.chat_requests()) == 1


@pytest.mark.parametrize(
    "args", [("log", "list", "-n", HUGE), ("log", "search", "turn", "-n", HUGE)]
)
def test_a_count_past_sqlite_integers_lists_everything(fake_ollama, ore_env, args) -> None:
    ok(ore("a turn", env=ore_env))
    assert "a turn" in ok(ore(*args, env=ore_env)).stdout


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (("log", "prune", "--before", "99999999999999999d"), "deleted 0 turns"),
        (("log", "list", "--since", "0001-01-01"), "an old turn"),
        (("log", "usage", "--since", "99999999999999999999w"), "llama3.2"),
    ],
)
def test_a_date_before_the_epoch_is_the_whole_log(fake_ollama, ore_env, args, shown) -> None:
    ok(ore("an old turn", env=ore_env))
    result = ok(ore(*args, env=ore_env))
    assert shown in result.stdout + result.stderr
    assert "an old turn" in ok(ore("log", "list", env=ore_env)).stdout


def test_edited_columns_reach_a_terminal_neutralised(fake_ollama, ore_env) -> None:
    ok(ore("hostile columns", env=ore_env))
    with closing(sqlite3.connect(Path(ore_env["ORE_HOME"]) / "log.db")) as db:
        db.execute(
            "UPDATE turns SET model = ?, session = ?, backend = ?, finish_reason = ?",
            ("m\x1b]0;pwn\x07", "s\x1b[2J", "b\x1b[31m", "f\x1b[5m"),
        )
        db.commit()
    for args in (
        ["log", "list"],
        ["log", "show", "-1"],
        ["log", "usage"],
        ["log", "search", "hostile"],
    ):
        shown = run_in_pty(["log", *args[1:]], env=ore_env)
        assert b"\x1b]" not in shown and b"\x1b[2J" not in shown and b"\x07" not in shown, shown
    refused = ore("--continue", "go on", env=ore_env)
    assert refused.returncode == 1
    assert one_line_error(refused).startswith("Error: ")
    assert "\x1b" not in refused.stderr


def test_continue_from_a_one_shot_never_joins_a_session_of_the_same_name(
    fake_ollama, ore_env
) -> None:
    ok(ore("--save-session", "log-2", "mine", env=ore_env))  # turn 1, a session named log-2
    ok(ore("unrelated one-shot", env=ore_env))  # turn 2: --continue derives log-2 from it
    ok(ore("--continue", "follow up", env=ore_env))
    mine = ok(ore("session", "show", "log-2", env=ore_env)).stdout
    assert "follow up" not in mine and "unrelated" not in mine


def test_rm_names_each_turn_once(fake_ollama, ore_env) -> None:
    ok(ore("only turn", env=ore_env))
    assert (
        ok(ore("log", "rm", "1", "-1", "1", env=ore_env)).stderr == "deleted turn 1 from the log\n"
    )


def test_rm_on_a_log_held_locked_says_so_and_not_that_a_turn_went_unlogged(
    fake_ollama, ore_env
) -> None:
    ok(ore("a turn", env=ore_env))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "db.execute('BEGIN EXCLUSIVE'); print('held', flush=True); time.sleep(30)",
            str(Path(ore_env["ORE_HOME"]) / "log.db"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        result = ore("log", "rm", "1", env=ore_env)
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()
    assert result.returncode == 1
    line = one_line_error(result)
    assert line.startswith("Error: ") and "locked" in line and "turn is not logged" not in line
    assert "a turn" in ok(ore("log", "list", env=ore_env)).stdout  # nothing deleted


def test_continue_after_the_latest_turns_session_was_removed_goes_on_from_the_log(
    fake_ollama, ore_env
) -> None:
    ok(ore("--save-session", "s1", "alpha", env=ore_env))
    ok(ore("--continue", "beta", env=ore_env))  # turn 2, in s1
    ok(ore("session", "rm", "s1", env=ore_env))
    ok(ore("--continue", "gamma", env=ore_env))
    sent = [
        m["content"] for m in fake_ollama.chat_requests()[-1]["messages"] if m["role"] != "system"
    ]
    assert sent[-1] == "gamma" and "alpha" in sent and "beta" in sent  # the logged conversation
    assert "s1" not in ok(ore("session", "list", env=ore_env)).stdout  # removed stays removed
    assert "gamma" in ok(ore("session", "show", "log-2", env=ore_env)).stdout


def _edit(env: dict[str, str], sql: str) -> None:
    with closing(sqlite3.connect(Path(env["ORE_HOME"]) / "log.db")) as db:
        db.execute(sql)
        db.commit()


@pytest.mark.parametrize("version", [-1, 0])
def test_a_schema_version_below_one_is_one_line(fake_ollama, ore_env, version) -> None:
    ok(ore("a turn", env=ore_env))
    _edit(ore_env, f"UPDATE schema_version SET version = {version}")
    for args in (("log", "list"), ("log", "show", "-1"), ("--continue", "go on")):
        result = ore(*args, env=ore_env)
        assert result.returncode == 1
        assert "schema version" in one_line_error(result)
    turn = ok(ore("still answered", env=ore_env))
    assert turn.stdout == "echo: still answered\n" and "not logged" in turn.stderr


@pytest.mark.parametrize("ref", ["1", "-1"])
def test_a_row_that_cannot_be_read_can_be_removed_as_the_error_says(
    fake_ollama, ore_env, ref
) -> None:
    ok(ore("a good turn", env=ore_env))
    ok(ore("an edited turn", env=ore_env))
    _edit(ore_env, "UPDATE turns SET tokens_in = 'lots' WHERE id = 2")
    listing = ore("log", "list", env=ore_env)
    assert listing.returncode == 1 and "'ore log rm ID'" in one_line_error(listing)
    ok(ore("log", "rm", "2" if ref == "1" else "-1", env=ore_env))
    assert "a good turn" in ok(ore("log", "list", env=ore_env)).stdout


@pytest.mark.parametrize("flag", ["--model", "--session"])
def test_an_empty_filter_matches_nothing_and_does_not_call_the_log_empty(
    fake_ollama, ore_env, flag
) -> None:
    ok(ore("a turn", env=ore_env))
    assert ok(ore("log", "list", flag, "", env=ore_env)).stderr == "no logged turn matches\n"
