"""`ore.log` as a library, in this process: the schema and its version, a lock held past the
timeout, the dates the flags take, the search syntax, a logged turn as a session, and that the
log keeps the very document `--artifact-out` writes."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import pytest
from _cli import needs_ore, run_ore

from ore.artifacts import BackendInfo, ExecutionArtifact, parse_artifact
from ore.log import (
    SCHEMA_VERSION,
    LogError,
    export,
    find,
    list_turns,
    parse_date,
    record,
    remove,
    seed_session,
    usage,
)
from ore.log import db as log_db
from ore.log.queries import fts_query
from ore.types import Message, Response


def artifact(prompt: str = "hi", answer: str = "hello", n: int = 0) -> ExecutionArtifact:
    return ExecutionArtifact(
        execution_id=f"exec-{n}",
        timestamp=1_700_000_000.0 + n,
        prompt=prompt,
        model_id="llama3.2:latest",
        output=Response(content=answer, model_id="llama3.2:latest"),
        messages=(
            Message(role="system", content="persona"),
            Message(role="user", content=prompt),
        ),
        ore_version="test",
        backend=BackendInfo("ollama", "http://user:pw@127.0.0.1:11434/?k=v"),
    )


def test_a_new_log_has_the_current_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    record(artifact(), path=path)
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_an_empty_file_is_migrated_and_a_missing_log_reads_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    assert list_turns(path=path) == [] and not path.exists()  # reading creates nothing
    path.touch()
    assert list_turns(path=path) == []
    assert record(artifact(), path=path) == 1


def test_the_same_turn_is_kept_once(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    assert record(artifact(), path=path) == record(artifact(), path=path) == 1
    assert len(list_turns(path=path)) == 1


def test_no_credential_of_the_address_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    record(artifact(), path=path)
    _, document = find(1, path=path)
    assert json.loads(document)["backend"]["base_url"] == "http://127.0.0.1:11434/"
    assert not [p for p in tmp_path.glob("log.db*") if b"pw" in p.read_bytes()]


def test_a_lock_held_past_the_timeout_is_one_log_error(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "log.db"
    record(artifact(), path=path)
    monkeypatch.setattr(log_db, "BUSY_SECONDS", 0.3)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(LogError, match="stayed locked"):
            record(artifact(n=1), path=path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_writer_waits_for_a_short_lock_instead_of_failing(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    record(artifact(), path=path)
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    release.start()
    started = time.monotonic()
    assert record(artifact(n=1), path=path) == 2
    assert time.monotonic() - started >= 0.4
    release.join()
    holder.close()


def test_a_record_of_a_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    record(artifact(), path=path)
    with closing(sqlite3.connect(path)) as db:
        db.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION + 1,))
        db.commit()
    before = path.read_bytes()
    with pytest.raises(LogError, match="newer ORE"):
        record(artifact(n=1), path=path)
    assert path.read_bytes() == before


def test_dates_and_ages() -> None:
    now = 1_800_000_000.0
    assert parse_date("3d", now=now) == now - 3 * 86400
    assert parse_date("12h", now=now) == now - 12 * 3600
    assert parse_date("2w", now=now) == now - 14 * 86400
    assert parse_date("2026-11-24") < parse_date("2026-11-24T09:30")
    with pytest.raises(ValueError, match="not a date"):
        parse_date("last tuesday")


def test_search_text_is_words_never_fts_syntax() -> None:
    assert fts_query('nginx AND "502" OR (x*') == '"nginx" "AND" "502" "OR" "x"'
    assert fts_query("  ...  ") is None


def test_a_one_shot_becomes_a_session_of_what_it_sent_and_its_answer() -> None:
    parent = replace(
        artifact("now this", "answer"),
        messages=(
            Message(role="system", content="persona"),
            Message(role="user", content="earlier"),
            Message(role="assistant", content="earlier answer"),
            Message(role="user", content="[Tool:x]...\n\nnow this"),
        ),
    )
    session = seed_session(parent)
    assert [(m.role, m.content) for m in session.messages] == [
        ("user", "earlier"),
        ("assistant", "earlier answer"),
        ("user", "now this"),
        ("assistant", "answer"),
    ]


def test_remove_refuses_an_unknown_turn_and_deletes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    record(artifact(), path=path)
    with pytest.raises(LogError, match="no turn 9"):
        remove([1, 9], path=path)
    assert [t.id for t in list_turns(path=path)] == [1]


@pytest.mark.parametrize("edit", ["tokens_in = 'abc'", "tokens_out = 2.5", "day = x'41'"])
def test_usage_refuses_an_edited_row_as_every_reader_does(tmp_path: Path, edit: str) -> None:
    """`ore log usage` never sums a token count an edited file made text (it printed 128.0);
    it names the row as `list`, `search` and `show` do."""
    path = tmp_path / "log.db"
    for n in range(3):
        record(artifact(f"p{n}", n=n), path=path)
    assert [u.turns for u in usage(path=path)] == [3]
    with closing(sqlite3.connect(path)) as db:
        db.execute(f"UPDATE turns SET {edit} WHERE id = 2")
        db.commit()
    for read in (usage, list_turns) if "tokens" in edit else (usage,):  # list shows no day
        with pytest.raises(LogError, match=r"cannot read \(turn '2'\).*ore log rm ID"):
            read(path=path)


def test_export_pages_through_every_turn_in_order(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    for n in range(7):
        record(artifact(f"p{n}", n=n), path=path)
    prompts = [json.loads(d)["input"]["prompt"] for d in export(path=path, batch=3)]
    assert prompts == [f"p{n}" for n in range(7)]


@needs_ore
def test_the_log_keeps_the_document_artifact_out_writes(fake_ollama, ore_env, tmp_path) -> None:
    out = tmp_path / "a.json"
    result = run_ore("--artifact-out", str(out), "-o", "temperature=0.1", "hi", env=ore_env)
    assert result.returncode == 0, result.stderr
    _, document = find(-1, path=Path(ore_env["ORE_HOME"]) / "log.db")
    assert json.loads(document) == json.loads(out.read_text())
    parse_artifact(document.encode())  # valid against the v3 schema


def test_a_search_ranks_the_newest_matches_of_a_very_common_word(tmp_path, monkeypatch) -> None:
    from ore.log import queries, search

    path = tmp_path / "log.db"
    record(artifact("nginx nginx nginx nginx", "x", n=0), path=path)  # the best match, oldest
    for n in range(1, 5):
        record(artifact("nginx and more words here", "y", n=n), path=path)
    assert [t.id for t in search("nginx", path=path)] == [1, 5, 4, 3, 2]
    monkeypatch.setattr(queries, "RANKED", 3)
    assert [t.id for t in search("nginx", path=path)] == [5, 4, 3]


def test_a_log_swapped_for_a_symlink_after_its_check_is_never_made_private_through_it(
    tmp_path: Path, monkeypatch
) -> None:
    """A readable log is made 0600 through the file itself, opened without following a link:
    a path swapped for a symlink between the look and the change leaves the link's target be."""
    import os
    import stat

    victim = tmp_path / "victim.txt"
    victim.write_text("not the log")
    victim.chmod(0o644)
    path = tmp_path / "log.db"
    path.symlink_to(victim)
    real_lstat = os.lstat
    looked = victim.stat()  # what the look saw: a regular file readable by others

    def lstat(name, *args, **kwargs):
        return looked if Path(name) == path else real_lstat(name, *args, **kwargs)

    monkeypatch.setattr(log_db.os, "lstat", lstat)
    log_db._keep_private(path)
    monkeypatch.undo()
    assert stat.S_IMODE(victim.stat().st_mode) == 0o644
