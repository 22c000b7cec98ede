"""The turn log through the installed `ore` command, each run its own process against the
loopback Ollama imitation: what is logged (and what is not), many writers at once, `kill -9`
mid-write, exact replay of every logged turn, the fixture log of this version, hostile log
files, reading, searching, deleting for good, and what `--continue` goes on from."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from _cli import ORE, needs_ore, one_line_error, run_in_pty, run_ore

pytestmark = needs_ore

DATA = Path(__file__).resolve().parent.parent / "data"
#: A log written by this version (schema 1): three turns, see `test_a_log_written_by_this_version_is_read`.
FIXTURE = DATA / "log-v1.db"


def ore(
    *args: str, env: dict[str, str], input: bytes | str = b""
) -> subprocess.CompletedProcess[str]:
    return run_ore(*args, env=env, input=input, timeout=60)


def log_db(env: dict[str, str]) -> Path:
    return Path(env["ORE_HOME"]) / "log.db"


def query(env: dict[str, str], sql: str) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(log_db(env))) as db:
        return db.execute(sql).fetchall()


def prompts(env: dict[str, str]) -> list[str]:
    if not log_db(env).exists():
        return []
    return [p for (p,) in query(env, "SELECT prompt FROM turns ORDER BY id")]


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return result


def stored_users(env: dict[str, str], name: str) -> list[str]:
    data = json.loads(ok(ore("session", "show", name, "--json", env=env)).stdout)
    return [m["content"] for m in data["messages"] if m["role"] == "user"]


# -- what is logged --------------------------------------------------------------------------


@pytest.mark.invariant
def test_every_completed_turn_is_logged_and_nothing_else(fake_ollama, ore_env) -> None:
    ok(ore("one", env=ore_env))
    ok(ore("--no-log", "two", env=ore_env))
    ok(ore("--dry-run", "--model", "llama3.2", "three", env=ore_env))
    fake_ollama.http_error = (500, {"error": "boom"})
    assert ore("four", env=ore_env).returncode == 1  # a failed turn is not logged
    fake_ollama.http_error = None
    ok(ore("-c", env=ore_env, input="five\nsix\n"))  # each REPL turn
    ok(ore("--artifact-in", "log:1", env=ore_env))  # a replay
    ok(ore("--artifact-in", "log:-1", "chain it", env=ore_env))  # a chain from the latest
    ok(ore("log", "off", env=ore_env))
    ok(ore("seven", env=ore_env))
    ok(ore("log", "on", env=ore_env))
    assert prompts(ore_env) == ["one", "five", "six", "one", "chain it"]
    relations = [r for (r,) in query(ore_env, "SELECT relation FROM turns ORDER BY id")]
    assert relations == ["root", "root", "root", "replay", "chain"]
    (columns,) = query(
        ore_env, "SELECT model, backend, tokens_in, tokens_out, finish_reason FROM turns LIMIT 1"
    )
    assert columns[:2] == ("llama3.2:latest", "ollama")
    assert columns[2] > 0 and columns[3] > 0 and columns[4] == "stop"


def test_the_log_is_private(fake_ollama, ore_env) -> None:
    ok(ore("a secret-bearing turn", env=ore_env))
    with closing(sqlite3.connect(log_db(ore_env))) as reader:  # keeps the -wal and -shm
        reader.execute("SELECT count(*) FROM turns").fetchall()
        ok(ore("another one", env=ore_env))
        files = sorted(p.name for p in Path(ore_env["ORE_HOME"]).glob("log.db*"))
        assert files == ["log.db", "log.db-shm", "log.db-wal"]
        for name in files:
            mode = (Path(ore_env["ORE_HOME"]) / name).stat().st_mode
            assert stat.S_IMODE(mode) == 0o600, name
    os.chmod(log_db(ore_env), 0o644)  # as a restore from a backup may leave it
    ok(ore("after the restore", env=ore_env))
    assert stat.S_IMODE(log_db(ore_env).stat().st_mode) == 0o600


# -- many writers, kill -9 ---------------------------------------------------------------------


@pytest.mark.invariant
def test_sixteen_turns_at_once_are_all_logged_once(fake_ollama, ore_env) -> None:
    assert ORE is not None
    procs = [
        subprocess.Popen(
            [ORE, "--no-stdin", f"turn {i}"],
            env=ore_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(16)
    ]
    results = [(p, *p.communicate(timeout=120)) for p in procs]
    for p, stdout, stderr in results:
        assert p.returncode == 0, stderr
        assert stderr == "", stderr  # no "database is locked", no "not logged"
        assert stdout.startswith("echo: turn ")
    assert sorted(prompts(ore_env)) == sorted(f"turn {i}" for i in range(16))
    ((distinct,),) = query(ore_env, "SELECT count(DISTINCT execution_id) FROM turns")
    assert distinct == 16
    assert query(ore_env, "PRAGMA integrity_check") == [("ok",)]


WRITER = """
import dataclasses, sys, uuid
from ore.log import load_artifact, record
seed = load_artifact(1)
print("ready", flush=True)
while True:
    record(dataclasses.replace(seed, execution_id=uuid.uuid4().hex), session=None, seconds=0.1)
"""


@pytest.mark.invariant
def test_kill_9_mid_write_never_corrupts_the_log(fake_ollama, ore_env) -> None:
    ok(ore("seed", env=ore_env))
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER], env=ore_env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    for w in writers:
        assert w.stdout is not None and w.stdout.readline() == "ready\n"
    for delay in (0.3, 0.45):  # well inside a stream of transactions
        time.sleep(delay)
        victim = writers.pop()
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
        assert victim.stdout is not None
        victim.stdout.close()
    assert query(ore_env, "PRAGMA integrity_check") == [("ok",)]
    ((turns,),) = query(ore_env, "SELECT count(*) FROM turns")
    ((indexed,),) = query(ore_env, "SELECT count(*) FROM turns_text")
    assert turns == indexed > 1  # a record and its text index entry land together or not at all
    ok(ore("after the crash", env=ore_env))
    listed = ok(ore("log", "list", "-n", "1", env=ore_env)).stdout
    assert "after the crash" in listed


# -- replay ----------------------------------------------------------------------------------


@pytest.mark.invariant
def test_every_logged_turn_replays_to_the_wire_request_dry_run_shows(fake_ollama, ore_env) -> None:
    fake_ollama.reply = '{"name": "Ada", "age": 36}'  # an answer the --schema turn accepts
    ok(ore("plain", env=ore_env))
    ok(ore("--system", "be brief", "with a system", env=ore_env))
    ok(ore("-o", "temperature=0.2", "-o", "num_predict=50", "with options", env=ore_env))
    ok(ore("-c", env=ore_env, input="first\nsecond with history\n"))
    ok(ore("--schema", "name, age int", "a person", env=ore_env))
    originals = [r for r in fake_ollama.chat_requests()]
    ids = [i for (i,) in query(ore_env, "SELECT id FROM turns ORDER BY id")]
    assert len(ids) == len(originals) == 6
    for number, original in zip(ids, originals, strict=True):
        dry = json.loads(ok(ore("--artifact-in", f"log:{number}", "--dry-run", env=ore_env)).stdout)
        fake_ollama.clear_requests()
        ok(ore("--no-log", "--artifact-in", f"log:{number}", env=ore_env))
        (sent,) = fake_ollama.chat_requests()
        assert sent["messages"] == dry["messages"] == original["messages"], number
        for control in ("options", "format"):
            assert sent.get(control) == original.get(control), (number, control)


def test_artifact_in_log_refuses_what_is_not_a_logged_turn(fake_ollama, ore_env) -> None:
    ok(ore("one", env=ore_env))
    for source in ("log:7", "log:-5"):
        result = ore("--artifact-in", source, env=ore_env)
        assert result.returncode == 1
        assert "log" in one_line_error(result)
    for source in ("log:x", "log:0"):  # not a turn id: a usage mistake, as `ore log show x`
        result = ore("--artifact-in", source, env=ore_env)
        assert result.returncode == 2, result.stderr
        assert f"'{source}' is not a turn" in result.stderr
    assert len(fake_ollama.chat_requests()) == 1


def test_show_artifact_chains_into_a_new_turn(fake_ollama, ore_env) -> None:
    ok(ore("the first answer", env=ore_env))
    artifact = ok(ore("log", "show", "-1", "--artifact", env=ore_env)).stdout
    assert json.loads(artifact)["artifact_version"] == "ore.exec.v3"
    fake_ollama.clear_requests()
    ok(ore("--artifact-in", "-", "critique it", env=ore_env, input=artifact))
    (sent,) = fake_ollama.chat_requests()
    assert "echo: the first answer" in sent["messages"][-1]["content"]
    assert prompts(ore_env) == ["the first answer", "critique it"]


# -- a log of this version, read by every later one -------------------------------------------


@pytest.mark.invariant
def test_a_log_written_by_this_version_is_read(fake_ollama, ore_env) -> None:
    shutil.copyfile(FIXTURE, log_db(ore_env))
    os.chmod(log_db(ore_env), 0o600)
    listed = json.loads(ok(ore("log", "list", "--json", env=ore_env)).stdout)
    assert [t["prompt"] for t in listed] == ["q3 nginx again", "q2 with a session", "q1 nginx"]
    assert [t["session"] for t in listed] == [None, "work", None]
    shown = json.loads(ok(ore("log", "show", "1", "--json", env=ore_env)).stdout)
    assert shown["artifact"]["output"]["content"] == "echo: q1 nginx"
    found = json.loads(ok(ore("log", "search", "nginx", "--json", env=ore_env)).stdout)
    assert {t["id"] for t in found} == {1, 3}
    exported = ok(ore("log", "export", env=ore_env)).stdout.splitlines()
    assert [json.loads(line)["input"]["prompt"] for line in exported] == [
        "q1 nginx",
        "q2 with a session",
        "q3 nginx again",
    ]
    dry = json.loads(ok(ore("--artifact-in", "log:2", "--dry-run", env=ore_env)).stdout)
    assert dry["messages"][-1]["content"] == "q2 with a session"
    ok(ore("a new turn", env=ore_env))  # written after the fixture's turns, ids never reused
    assert query(ore_env, "SELECT id FROM turns WHERE prompt = 'a new turn'") == [(4,)]


# -- hostile log files -----------------------------------------------------------------------


def _garbage(path: Path) -> None:
    path.write_bytes(b"\x00not a database at all\xff" * 100)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _symlink(path: Path) -> None:
    target = path.parent / "precious.txt"
    target.write_text("keep me")
    path.symlink_to(target)


def _directory(path: Path) -> None:
    path.mkdir()


def _future(path: Path) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        db.execute("INSERT INTO schema_version VALUES (99)")
        db.execute("CREATE TABLE turns_v99 (x)")
        db.commit()


def _foreign(path: Path) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE photos (name TEXT)")
        db.commit()


def _wal_symlink(path: Path) -> None:
    target = path.parent / "precious.txt"
    target.write_text("keep me")
    Path(f"{path}-wal").symlink_to(target)


HOSTILE = {
    "garbage": _garbage,
    "fifo": _fifo,
    "symlink": _symlink,
    "directory": _directory,
    "future schema": _future,
    "foreign database": _foreign,
    "wal symlink": _wal_symlink,
}


def _snapshot(home: Path) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for path in sorted(home.iterdir()):
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode):  # its mode too: a foreign file is not made private
            seen[path.name] = (path.read_bytes(), stat.S_IMODE(st.st_mode))
        elif stat.S_ISLNK(st.st_mode):
            seen[path.name] = ("link", os.readlink(path))
        else:
            seen[path.name] = stat.S_IFMT(st.st_mode)
    return seen


@pytest.mark.invariant
@pytest.mark.parametrize("kind", list(HOSTILE))
def test_a_hostile_log_file_is_one_line_and_never_overwritten(fake_ollama, ore_env, kind) -> None:
    home = Path(ore_env["ORE_HOME"])
    home.mkdir(exist_ok=True)
    HOSTILE[kind](log_db(ore_env))
    before = _snapshot(home)
    turn = ore("hello", env=ore_env)
    assert turn.returncode == 0  # the answer is printed and the exit code unchanged
    assert turn.stdout == "echo: hello\n"
    assert "not logged" in one_line_error(turn)
    listing = ore("log", "list", env=ore_env)
    assert listing.returncode == 1
    assert one_line_error(listing).startswith("Error: ")
    assert _snapshot(home) == before


# -- reading, searching, deleting --------------------------------------------------------------


def test_search_ranks_best_first_and_newest_first_among_equals(fake_ollama, ore_env) -> None:
    for prompt in ("the nginx proxy fails", "apache is fine", "the nginx proxy fails"):
        ok(ore(prompt, env=ore_env))
    ok(ore("nginx nginx nginx", env=ore_env))
    found = json.loads(ok(ore("log", "search", "nginx", "--json", env=ore_env)).stdout)
    assert [t["id"] for t in found] == [4, 3, 1]
    assert ok(ore("log", "search", 'AND "OR (', env=ore_env)).stdout == ""  # FTS syntax is text


def test_list_filters_and_usage_per_model_per_day(fake_ollama, ore_env) -> None:
    ok(ore("a", env=ore_env))
    ok(ore("-m", "qwen2.5:0.5b", "b", env=ore_env))
    ok(ore("--save-session", "work", "c", env=ore_env))
    rows = ok(ore("log", "list", env=ore_env)).stdout.splitlines()  # a pipe: TSV, no header
    assert [r.split("\t")[0] for r in rows] == ["3", "2", "1"]
    by_model = json.loads(
        ok(ore("log", "list", "--model", "qwen2.5:0.5b", "--json", env=ore_env)).stdout
    )
    assert [t["prompt"] for t in by_model] == ["b"]
    untagged = ok(ore("log", "list", "--model", "llama3.2", "--json", env=ore_env)).stdout
    assert [t["prompt"] for t in json.loads(untagged)] == ["c", "a"]
    in_session = json.loads(
        ok(ore("log", "list", "--session", "work", "--json", env=ore_env)).stdout
    )
    assert [t["prompt"] for t in in_session] == ["c"]
    assert (
        json.loads(ok(ore("log", "list", "--since", "2099-01-01", "--json", env=ore_env)).stdout)
        == []
    )
    assert (
        len(
            json.loads(
                ok(ore("log", "list", "-n", "2", "--since", "1d", "--json", env=ore_env)).stdout
            )
        )
        == 2
    )
    usage = json.loads(ok(ore("log", "usage", "--json", env=ore_env)).stdout)
    assert {(u["model"], u["turns"]) for u in usage} == {
        ("llama3.2:latest", 2),
        ("qwen2.5:0.5b", 1),
    }
    assert all(u["tokens_in"] > 0 and u["tokens_out"] > 0 for u in usage)
    bad = ore("log", "list", "--since", "yesterday-ish", env=ore_env)
    assert bad.returncode == 2


def test_log_alone_takes_the_listings_options(fake_ollama, ore_env) -> None:
    """`ore log -n 3` as `llm logs -n 3`: the listing's options on the group itself; before a
    subcommand they are a usage error naming where they go."""
    for prompt in ("a", "b", "c"):
        ok(ore(prompt, env=ore_env))
    shown = json.loads(ok(ore("log", "-n", "2", "--json", env=ore_env)).stdout)
    assert [t["prompt"] for t in shown] == ["c", "b"]
    assert (
        ok(ore("log", "-n", "1", env=ore_env)).stdout
        == ok(ore("log", "list", "-n", "1", env=ore_env)).stdout
    )
    mixed = ore("log", "-n", "2", "search", "a", env=ore_env)
    assert mixed.returncode == 2
    assert mixed.stdout == ""
    assert "-n before 'search' belongs to the listing" in mixed.stderr


@pytest.mark.invariant
def test_rm_and_prune_delete_for_good(fake_ollama, ore_env) -> None:
    ok(ore("the password is hunter2zebra", env=ore_env))
    ok(ore("nothing secret", env=ore_env))
    ok(ore("log", "rm", "1", env=ore_env))
    home = Path(ore_env["ORE_HOME"])
    on_disk = b"".join(p.read_bytes() for p in home.glob("log.db*"))
    assert b"hunter2zebra" not in on_disk
    assert prompts(ore_env) == ["nothing secret"]
    assert ore("log", "show", "1", env=ore_env).returncode == 1
    ok(ore("another private thing: quokka42", env=ore_env))
    ok(ore("log", "prune", "--before", "2099-01-01", env=ore_env))
    on_disk = b"".join(p.read_bytes() for p in home.glob("log.db*"))
    assert b"quokka42" not in on_disk and b"nothing secret" not in on_disk
    assert prompts(ore_env) == []


def test_export_is_json_lines_of_artifacts_and_show_is_readable(fake_ollama, ore_env) -> None:
    ok(ore("one", env=ore_env))
    ok(ore("two\nlines", env=ore_env))
    lines = ok(ore("log", "export", env=ore_env)).stdout.splitlines()
    assert [json.loads(line)["input"]["prompt"] for line in lines] == ["one", "two\nlines"]
    assert all(json.loads(line)["artifact_version"] == "ore.exec.v3" for line in lines)
    shown = ok(ore("log", "show", "-1", env=ore_env)).stdout
    assert "two\nlines" in shown and "echo: two" in shown and "llama3.2:latest" in shown
    assert ok(ore("log", "show", "-2", env=ore_env)).stdout.count("echo: one") == 1


def test_an_empty_log_says_so_on_stderr(fake_ollama, ore_env) -> None:
    result = ok(ore("log", env=ore_env))
    assert result.stdout == "" and "empty" in result.stderr
    assert json.loads(ok(ore("log", "list", "--json", env=ore_env)).stdout) == []
    assert ore("log", "show", "-1", env=ore_env).returncode == 1
    status = json.loads(ok(ore("log", "status", "--json", env=ore_env)).stdout)
    assert status["log"] is True and status["turns"] == 0


def test_log_off_and_on_are_kept_in_the_config(fake_ollama, ore_env) -> None:
    ok(ore("log", "off", env=ore_env))
    assert "log = false" in (Path(ore_env["ORE_HOME"]) / "config.toml").read_text()
    assert json.loads(ok(ore("log", "status", "--json", env=ore_env)).stdout)["log"] is False
    ok(ore("not kept", env=ore_env))
    ok(ore("log", "on", env=ore_env))
    ok(ore("kept", env=ore_env))
    assert prompts(ore_env) == ["kept"]


# -- --continue ------------------------------------------------------------------------------


@pytest.mark.invariant
def test_continue_goes_on_from_the_latest_logged_turn(fake_ollama, ore_env) -> None:
    ok(ore("--save-session", "older", "in a session", env=ore_env))
    ok(ore("a one-shot", env=ore_env))
    fake_ollama.clear_requests()
    ok(ore("--continue", "and then?", env=ore_env))
    (sent,) = fake_ollama.chat_requests()
    assert [m["content"] for m in sent["messages"][1:]] == [
        "a one-shot",
        "echo: a one-shot",
        "and then?",
    ]
    assert stored_users(ore_env, "log-2") == ["a one-shot", "and then?"]
    ok(ore("-C", "and after that?", env=ore_env))  # the latest turn is now in session log-2
    assert stored_users(ore_env, "log-2") == ["a one-shot", "and then?", "and after that?"]
    assert stored_users(ore_env, "older") == ["in a session"]
    ok(ore("--resume-session", "older", "back to it", env=ore_env))
    ok(ore("--continue", "more", env=ore_env))
    assert stored_users(ore_env, "older") == ["in a session", "back to it", "more"]


def test_continue_goes_on_with_the_logged_turns_model_unless_model_is_given(
    fake_ollama, ore_env
) -> None:
    """A conversation goes on with the model it had (as `llm -c`): not the default model, not
    ORE_MODEL; --model switches it, and the next --continue keeps the switch."""
    ok(ore("--model", "qwen2.5:0.5b", "a one-shot", env=ore_env))
    fake_ollama.clear_requests()
    ok(ore("--continue", "next", env=ore_env))
    ok(ore("--continue", "--model", "llama3.2:latest", "switched", env=ore_env))
    ok(ore("--continue", "kept", env=ore_env))
    ok(ore("--continue", "still", env={**ore_env, "ORE_MODEL": "qwen2.5:0.5b"}))
    assert [r["model"] for r in fake_ollama.chat_requests()] == [
        "qwen2.5:0.5b",
        "llama3.2:latest",
        "llama3.2:latest",
        "llama3.2:latest",
    ]
    dry = json.loads(ok(ore("--continue", "--dry-run", "then", env=ore_env)).stdout)
    assert dry["model"] == "llama3.2:latest"
    assert dry["settings"]["model"] == {
        "value": "llama3.2:latest",
        "origin": "log",
        "source": "--continue",
    }


def test_continue_with_the_log_off_is_the_session_written_last(fake_ollama, ore_env) -> None:
    ok(ore("--save-session", "work", "w1", env=ore_env))
    ok(ore("a one-shot", env=ore_env))
    ok(ore("log", "off", env=ore_env))
    ok(ore("--continue", "w2", env=ore_env))
    assert stored_users(ore_env, "work") == ["w1", "w2"]
    ok(ore("log", "on", env=ore_env))
    ok(ore("--no-log", "--continue", "w3", env=ore_env))  # --no-log: the log is not consulted
    assert stored_users(ore_env, "work") == ["w1", "w2", "w3"]


def test_continue_names_the_session_at_a_terminal(fake_ollama, ore_env) -> None:
    ok(ore("a one-shot", env=ore_env))
    shown = run_in_pty(["--continue", "and then?"], ore_env).decode(errors="replace")
    assert "going on from logged turn 1 in a new session 'log-1', model llama3.2:latest" in shown
    ok(ore("log", "off", env=ore_env))
    shown = run_in_pty(["--continue", "again"], ore_env).decode(errors="replace")
    assert "the turn log is off, so going on in the session written last, 'log-1'" in shown


def test_continue_dry_run_from_a_one_shot_writes_nothing(fake_ollama, ore_env) -> None:
    ok(ore("a one-shot", env=ore_env))
    dry = json.loads(ok(ore("--continue", "--dry-run", "--model", "m", "next", env=ore_env)).stdout)
    assert [m["content"] for m in dry["messages"][1:]] == ["a one-shot", "echo: a one-shot", "next"]
    assert ore("session", "show", "log-1", env=ore_env).returncode == 1


# -- start-up --------------------------------------------------------------------------------

PROBE = """
import json, sys
from ore.cli import main
try:
    main(json.loads(sys.argv[1]))
except SystemExit:
    pass
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "args",
    [["log", "--help"], ["log"], ["log", "search", "x"], ["log", "usage"], ["log", "status"]],
    ids=" ".join,
)
def test_reading_the_log_imports_nothing_heavy(args: list[str], ore_env) -> None:
    heavy = ("ollama", "httpx", "networkx", "tree_sitter", "jsonschema", "rich")
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=heavy), json.dumps(args)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=ore_env,
    )
    assert json.loads(result.stderr.strip().splitlines()[-1]) == [], result.stderr


PROGRAM_PROBE = """
import os, sys
import ore.cli.ending as ending
real_end = ending.end
def end(code, work):  # what the program loaded, told just before its exit
    loaded = sorted(m for m in sys.modules if m.startswith(("ore.artifacts", "ore.log")))
    os.write(2, ("loaded " + " ".join(loaded) + "\\n").encode())
    real_end(code, work)
ending.end = end
sys.argv = ["ore", "--model", "llama3.2:latest", "a logged turn"]
from ore.cli import program
program()
"""


def test_a_logged_turn_loads_the_document_and_the_writer_only(fake_ollama, ore_env) -> None:
    """What logging adds to a one-shot turn (issue 23: 5 ms at most) is its document, SQLite
    and the log's writer: no artifact class, no reader's code, no writers' lock (stderr is a
    pipe here, so the record is written before the exit)."""
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM_PROBE],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=ore_env,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "echo: a logged turn\n"
    loaded = done.stderr.strip().splitlines()[-1].split()[1:]
    assert loaded == [
        "ore.artifacts",
        "ore.artifacts._document",
        "ore.log",
        "ore.log.db",
        "ore.log.records",
    ], done.stderr
    from ore.log import list_turns

    assert [t.prompt for t in list_turns(path=log_db(ore_env))] == ["a logged turn"]


@pytest.mark.parametrize(
    ("edit", "command"),
    [
        ("UPDATE turns SET time = 'yesterday'", ("log", "list")),
        ("UPDATE turns SET time = 1e300", ("log", "search", "edited")),
        ("UPDATE artifacts SET document = 'not json'", ("log", "show", "1")),
        ("UPDATE artifacts SET document = '[1, 2]'", ("--artifact-in", "log:1")),
        ("DELETE FROM artifacts", ("log", "show", "-1", "--artifact")),
    ],
)
def test_an_edited_log_is_one_line_never_a_traceback(fake_ollama, ore_env, edit, command) -> None:
    ok(ore("an edited turn", env=ore_env))
    with closing(sqlite3.connect(log_db(ore_env))) as db:
        db.execute(edit)
        db.commit()
    result = ore(*command, env=ore_env)
    assert result.returncode == 1
    assert one_line_error(result).startswith("Error: ")
    assert len(fake_ollama.chat_requests()) == 1


def test_a_log_that_cannot_be_written_leaves_every_exit_code_as_it_was(
    fake_ollama, ore_env
) -> None:
    home = Path(ore_env["ORE_HOME"])
    home.mkdir(exist_ok=True)
    _garbage(log_db(ore_env))
    failed = ore("--schema", "name, age int", "not json back", env=ore_env)
    assert failed.returncode == 1  # the schema's failure, as without a log
    assert failed.stdout == "echo: not json back\n"
    assert sum("not logged" in line for line in failed.stderr.splitlines()) == 1
    repl = ore("-c", env=ore_env, input="one\ntwo\n")
    assert repl.returncode == 0
    assert repl.stdout == "echo: one\necho: two\n"
    assert repl.stderr.count("not logged") == 2  # each turn says it, and the REPL goes on


def _small_files() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))  # Python ignores SIGXFSZ: EFBIG


@pytest.mark.invariant
def test_a_full_disk_is_one_line_the_answer_printed_and_the_log_intact(
    fake_ollama, ore_env
) -> None:
    ok(ore("before", env=ore_env))
    assert ORE is not None
    full = subprocess.run(
        [ORE, "--no-stdin", "while the disk is full"],
        env=ore_env,
        capture_output=True,
        text=True,
        preexec_fn=_small_files,
        timeout=60,
    )
    assert full.returncode == 0
    assert full.stdout == "echo: while the disk is full\n"
    assert "not logged" in one_line_error(full)
    assert query(ore_env, "PRAGMA integrity_check") == [("ok",)]
    assert prompts(ore_env) == ["before"]
    ok(ore("after", env=ore_env))
    assert prompts(ore_env) == ["before", "after"]


def test_continue_carries_openai_only_while_an_address_is_configured(fake_ollama, ore_env) -> None:
    """Only the backend's name is logged, never the address a turn went to: a turn that went
    to an OpenAI-compatible server by an address given once (or recorded in an artifact) must
    not send the key to the built-in OpenAI address when `--continue` goes on by name. With
    no OpenAI address configured the turn goes on the user's default backend."""
    from fake_openai import FakeOpenAI

    with FakeOpenAI(models=["llama3.2:latest"]) as srv:
        first = ("--backend", "openai", "--base-url", srv.url, "-m", "llama3.2:latest", "q")
        ok(ore(*first, env=ore_env))
        configured = {**ore_env, "ORE_BASE_URL": srv.url}
        dry = json.loads(ok(ore("--continue", "--dry-run", "x", env=configured)).stdout)
        assert dry["settings"]["backend"]["origin"] == "log"
        assert dry["destination"]["backend"] == "openai"
        fake_ollama.clear_requests()
        ok(ore("--continue", "and then?", env=ore_env))  # no OpenAI address now: Ollama
        (sent,) = fake_ollama.chat_requests()
        assert sent["messages"][-1]["content"] == "and then?"
