"""An outside tester's pass over the turn log and `--continue` (issues 23 and 26), through real
processes: the answer before the log's write, `--continue` following the logged turn's own
conversation (not a name), and a `--continue` whose log write failed going on where it was."""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._cli import ORE, needs_ore, run_in_pty, run_ore, without_progress

pytestmark = needs_ore


def _held(home: Path) -> sqlite3.Connection:
    """The log's write lock, held as another process would hold it."""
    holder = sqlite3.connect(home / "log.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    return holder


def _log(home: Path) -> list[tuple[str | None, str]]:
    """(session, prompt excerpt) of every logged turn, oldest first."""
    with sqlite3.connect(home / "log.db") as db:
        return list(db.execute("SELECT session, prompt FROM turns ORDER BY id"))


@pytest.mark.invariant
@pytest.mark.parametrize("flags", [(), ("--json",)], ids=["text", "json"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
def test_the_answer_is_on_stdout_before_the_log_write_and_a_signal_then_keeps_it(
    ore_env, flags, signum
) -> None:
    """In a pipe the answer (or the JSON object) is printed and flushed before the turn is
    logged: a log held locked by another process delays only the exit, and SIGTERM or SIGHUP
    in that wait ends ORE at once (128+N) with the answer already on stdout."""
    home = Path(ore_env["ORE_HOME"])
    assert run_ore("-m", "llama3.2", "first", env=ore_env).returncode == 0
    holder = _held(home)
    try:
        started = time.monotonic()
        proc = subprocess.Popen(
            [ORE or "ore", "-m", "llama3.2", "--no-stdin", *flags, "the question"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=ore_env,
        )
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 8)
        assert ready, "no answer on stdout while the log is locked"
        first = os.read(proc.stdout.fileno(), 65536)
        assert time.monotonic() - started < 8
        assert proc.poll() is None  # still waiting for the log's lock
        proc.send_signal(signum)
        # ended at once, not after the log's 10 s busy wait (the lock is still held)
        rest, err = proc.communicate(timeout=5)
    finally:
        holder.rollback()
        holder.close()
    shown = (first + rest).decode()
    assert proc.returncode == 128 + signum, err
    if flags:
        assert json.loads(shown)["content"] == "echo: the question"
    else:
        assert shown == "echo: the question\n", shown
    assert b"Traceback" not in err


def test_continue_follows_the_logged_turns_conversation_not_a_reused_name(ore_env) -> None:
    """Sessions renamed so that the logged turn's name now holds another conversation:
    `--continue` follows the conversation to its new name (the session holding the logged
    turn), never appends to the unrelated session that took the name, nor sends its history."""
    home = Path(ore_env["ORE_HOME"])
    for name, prompt in (("other", "birthday plans"), ("work", "k8s secrets")):
        saved = run_ore("-m", "llama3.2", "--save-session", name, prompt, env=ore_env)
        assert saved.returncode == 0
    assert run_ore("session", "rename", "work", "archive", env=ore_env).returncode == 0
    assert run_ore("session", "rename", "other", "work", env=ore_env).returncode == 0
    result = run_ore("-m", "llama3.2", "-C", "how do I rotate them?", env=ore_env)
    assert result.returncode == 0, result.stderr
    work = (home / "sessions" / "work.json").read_text(encoding="utf-8")
    assert "rotate" not in work  # the renamed birthday session is untouched
    archive = (home / "sessions" / "archive.json").read_text(encoding="utf-8")
    assert "k8s secrets" in archive and "rotate" in archive
    show = run_ore("log", "show", "-1", "--artifact", env=ore_env)
    sent = json.dumps(json.loads(show.stdout))
    assert "k8s secrets" in sent and "birthday" not in sent
    assert _log(home)[-1] == ("archive", "how do I rotate them?")


def test_continue_after_a_removed_session_replaced_under_its_name(ore_env) -> None:
    """`session rm work`, then a new `work` made with --no-log: --continue goes on from the
    logged turn (as for a removed session), not in the new `work`."""
    home = Path(ore_env["ORE_HOME"])
    run_ore("-m", "llama3.2", "--save-session", "work", "k8s secrets", env=ore_env)
    assert run_ore("session", "rm", "work", env=ore_env).returncode == 0
    run_ore("-m", "llama3.2", "--no-log", "--save-session", "work", "birthday", env=ore_env)
    result = run_ore("-m", "llama3.2", "-C", "and then?", env=ore_env)
    assert result.returncode == 0, result.stderr
    work = (home / "sessions" / "work.json").read_text(encoding="utf-8")
    assert "and then?" not in work


def test_continue_still_appends_to_a_session_that_holds_the_logged_turn(ore_env) -> None:
    """The ordinary case is unchanged: the logged turn's session is resumed (even after a
    --no-log turn was appended to it)."""
    home = Path(ore_env["ORE_HOME"])
    run_ore("-m", "llama3.2", "--save-session", "work", "k8s secrets", env=ore_env)
    run_ore("-m", "llama3.2", "--no-log", "--resume-session", "work", "more", env=ore_env)
    assert run_ore("-m", "llama3.2", "-C", "and then?", env=ore_env).returncode == 0
    work = (home / "sessions" / "work.json").read_text(encoding="utf-8")
    assert "and then?" in work and "k8s secrets" in work
    assert not [p for p in (home / "sessions").glob("log-*")]


def test_continue_goes_on_in_the_session_made_from_a_one_shot_when_its_log_write_failed(
    ore_env,
) -> None:
    """`ore "one-shot"`; the log locked; `ore -C "cont a"` (saved in log-N, not logged);
    `ore -C "cont b"` goes on in log-N with "cont a" in its context, no fork."""
    home = Path(ore_env["ORE_HOME"])
    assert run_ore("-m", "llama3.2", "one-shot", env=ore_env).returncode == 0
    holder = _held(home)
    try:
        env = ore_env  # each write waits out the busy timeout (10 s), then gives up
        first = run_ore("-m", "llama3.2", "-C", "cont a", env=env)
        assert first.returncode == 0, first.stderr
        assert "not logged" in first.stderr
        second = run_ore("-m", "llama3.2", "-C", "cont b", env=env)
    finally:
        holder.rollback()
        holder.close()
    assert second.returncode == 0, second.stderr
    assert "holds another session" not in second.stderr
    names = sorted(p.name for p in (home / "sessions").glob("log-*.json"))
    assert names == ["log-1.json"], names
    saved = (home / "sessions" / "log-1.json").read_text(encoding="utf-8")
    assert "cont a" in saved and "cont b" in saved


def test_the_log_names_a_session_only_when_the_turn_was_saved_there(ore_env) -> None:
    """Sessions that cannot be written: the turn is logged without a session, not with one
    that never existed."""
    home = Path(ore_env["ORE_HOME"])
    with _full_sessions(home):
        result = run_ore("-m", "llama3.2", "--save-session", "work", "q", env=ore_env)
    assert result.returncode == 1
    assert result.stdout == "echo: q\n"
    assert "the turn is not saved in session 'work'" in result.stderr
    assert _log(home) == [(None, "q")]


@contextlib.contextmanager
def _full_sessions(home: Path) -> Iterator[None]:
    """The sessions folder on a small tmpfs filled to the last byte (the log beside it
    writable); skips when a tmpfs cannot be mounted."""
    where = home / "sessions"
    where.mkdir(mode=0o700)
    mount = shutil.which("mount")
    size = ["-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(where)]
    if mount is None or subprocess.run([mount, *size], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (not root, or no mount namespace)")
    try:
        with contextlib.suppress(OSError), open(where / "filler", "wb") as filler:
            while True:
                filler.write(b"\0" * 4096)
                filler.flush()
        yield
    finally:
        subprocess.run(["umount", str(where)], capture_output=True)


def test_export_reports_and_skips_a_row_that_is_not_an_artifact(ore_env) -> None:
    """One rule for a corrupt row: `log show --artifact` and `log:ID` refuse it; `log export`
    skips it with a line on stderr, writes the others, and exits 1 at the end."""
    home = Path(ore_env["ORE_HOME"])
    for prompt in ("one", "two", "three"):
        assert run_ore("-m", "llama3.2", prompt, env=ore_env).returncode == 0
    with sqlite3.connect(home / "log.db") as db:
        db.execute("UPDATE artifacts SET document = 'not json' WHERE id = 2")
    result = run_ore("log", "export", env=ore_env)
    assert result.returncode == 1, result.stderr
    prompts = [json.loads(line)["input"]["prompt"] for line in result.stdout.splitlines()]
    assert prompts == ["one", "three"]
    assert "turn 2 is not exported" in result.stderr
    assert result.stderr.count("Error: ") == 1 and "Traceback" not in result.stderr
    assert run_ore("log", "show", "2", "--artifact", env=ore_env).returncode == 1
    assert run_ore("--artifact-in", "log:2", env=ore_env).returncode == 1


@pytest.mark.parametrize(
    "document", ["not json", "[" * 200_000 + "]" * 200_000, '{"artifact_version": 7}']
)
def test_log_show_refuses_a_row_that_is_not_an_artifact_in_one_line(ore_env, document) -> None:
    """`log show ID` (text and --json) follows the same rule as --artifact, log:ID and
    export: a row nested 200,000 deep was a RecursionError traceback."""
    home = Path(ore_env["ORE_HOME"])
    assert run_ore("-m", "llama3.2", "one", env=ore_env).returncode == 0
    with sqlite3.connect(home / "log.db") as db:
        db.execute("UPDATE artifacts SET document = ? WHERE id = 1", (document,))
    for extra in ((), ("--json",)):
        shown = run_ore("log", "show", "1", *extra, env=ore_env)
        assert shown.returncode == 1 and shown.stdout == "", shown.stderr
        assert shown.stderr.count("\n") == 1 and shown.stderr.startswith("Error: ")
        assert "log:1" in shown.stderr


@pytest.mark.parametrize("ref", ["+1", " 1", "\uff11", "log:\uff11", "1-", "--1"])
def test_a_turn_id_is_ascii_digits(ore_env, ref) -> None:
    """`log show` and `--artifact-in log:` take 12, -1 or log:12: a full-width digit, a sign
    or a blank is a usage mistake, not turn 1."""
    assert run_ore("-m", "llama3.2", "one", env=ore_env).returncode == 0
    shown = run_ore("log", "show", ref.removeprefix("log:"), env=ore_env)
    assert shown.returncode == 2 and "is not a turn" in shown.stderr, shown.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("--artifact-in", "log:0"),
        ("log", "show", "0"),
        ("-f", "-", "-f", "-", "q"),
        ("-f", "-", "-"),
        ("-f", "-", "--attach", "-", "q"),
        ("-f", "-", "--artifact-in", "-", "q"),
    ],
    ids=["artifact-in log:0", "log show 0", "-f - -f -", "-f - -", "-f - -a -", "-f - in -"],
)
def test_the_same_mistake_is_the_same_usage_error(ore_env, args) -> None:
    """A turn id of 0 and stdin given twice are usage mistakes however they are spelled:
    exit 2 with the usage shape, before any call."""
    result = run_ore(*args, env=ore_env, input="text")
    assert result.returncode == 2, result.stderr
    assert "Usage:" in result.stderr and "Traceback" not in result.stderr


def test_log_rm_on_a_full_disk_deletes_all_of_a_turn_or_nothing(ore_env, tmp_path) -> None:
    """`ore log rm` on a full filesystem: either the turn is gone from the listings and its
    text from every file of the log (exit 0), or nothing is deleted and the line says so
    (exit 1); once there is room, the same command deletes it for good."""
    home = tmp_path / "small"
    home.mkdir()
    mount = shutil.which("mount")
    size = ["-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(home)]
    if mount is None or subprocess.run([mount, *size], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (not root, or no mount namespace)")
    env = {**ore_env, "ORE_HOME": str(home)}
    try:
        for prompt in ("first", "zebrasecret99 is the key", "third"):
            assert run_ore("-m", "llama3.2", prompt, env=env).returncode == 0
        with contextlib.suppress(OSError), open(home / "filler", "wb") as filler:
            while True:
                filler.write(b"\0" * 4096)
                filler.flush()
        result = run_ore("log", "rm", "2", env=env)
        listed = run_ore("log", "list", "--json", env=env)
        ids = [turn["id"] for turn in json.loads(listed.stdout)]
        files = b"".join(p.read_bytes() for p in home.glob("log.db*"))
        if result.returncode == 0:
            assert 2 not in ids and b"zebrasecret99" not in files
        else:
            assert result.returncode == 1 and "Traceback" not in result.stderr
            assert "nothing is deleted" in result.stderr, result.stderr
            assert 2 in ids, ids
        (home / "filler").unlink()
        if result.returncode:
            again = run_ore("log", "rm", "2", env=env)
            assert again.returncode == 0, again.stderr
        files = b"".join(p.read_bytes() for p in home.glob("log.db*"))
        assert b"zebrasecret99" not in files
    finally:
        subprocess.run(["umount", str(home)], capture_output=True)


@pytest.mark.parametrize("source", ["a file in another folder", "stdin"])
def test_every_logged_turn_with_f_replays_as_it_was_sent(
    ore_env, fake_ollama, tmp_path, source
) -> None:
    """`--artifact-in log:-1` of a turn that sent `-f ctx.md` (replayed from another folder,
    the file since changed) or `-f -` sends the recorded messages: the -f text is in them."""
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    (here / "ctx.md").write_text("the context\n", encoding="utf-8")
    if source == "stdin":
        made = run_ore("-m", "llama3.2", "-f", "-", "q", env=ore_env, input="piped context\n")
    else:
        made = run_ore("-m", "llama3.2", "-f", "ctx.md", "q", env=ore_env, cwd=here)
    assert made.returncode == 0, made.stderr
    (here / "ctx.md").write_text("edited since\n", encoding="utf-8")
    (first,) = fake_ollama.chat_requests()
    fake_ollama.clear_requests()
    replayed = run_ore("--artifact-in", "log:-1", env=ore_env, cwd=there)
    assert replayed.returncode == 0, replayed.stderr
    (sent,) = fake_ollama.chat_requests()
    assert sent["messages"] == first["messages"]


def test_a_replay_with_f_is_told_to_chain_and_the_chain_with_f_works(
    ore_env, fake_ollama, tmp_path
) -> None:
    """`-f` with a replay is a usage mistake whose advice (a new prompt, to chain) is a
    command that works: a chain is one new turn, and sends the file and the artifact."""
    (tmp_path / "ctx.md").write_text("the context\n", encoding="utf-8")
    assert run_ore("-m", "llama3.2", "first", env=ore_env).returncode == 0
    refused = run_ore("--artifact-in", "log:-1", "-f", "ctx.md", env=ore_env, cwd=tmp_path)
    assert refused.returncode == 2 and "give a prompt to chain" in refused.stderr
    fake_ollama.clear_requests()
    chained = run_ore(
        "--artifact-in", "log:-1", "-f", "ctx.md", "and now?", env=ore_env, cwd=tmp_path
    )
    assert chained.returncode == 0, chained.stderr
    (sent,) = fake_ollama.chat_requests()
    user = sent["messages"][-1]["content"]
    assert "the context" in user and "echo: first" in user and user.endswith("and now?")


def test_continue_says_at_a_terminal_which_session_it_follows(ore_env) -> None:
    """At a terminal, one stderr line names the session --continue goes on in, and why."""
    run_ore("-m", "llama3.2", "--save-session", "work", "k8s secrets", env=ore_env)
    assert run_ore("session", "rename", "work", "archive", env=ore_env).returncode == 0
    shown = without_progress(run_in_pty(["-m", "llama3.2", "-C", "next"], ore_env))
    assert b"--continue: going on in session 'archive', which holds logged turn 1" in shown
    assert b"'work' was renamed or replaced" in shown
    run_ore("session", "rm", "archive", env=ore_env)
    shown = without_progress(run_in_pty(["-m", "llama3.2", "-C", "more"], ore_env))
    assert b"session 'archive' is gone, so going on from logged turn 2" in shown, shown
