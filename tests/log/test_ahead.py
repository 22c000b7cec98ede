"""`ore.log.Ahead`: the log opened in a thread while the model answers, for `record` to take. A
record through it is the record without it; a log that cannot be opened is the same one line,
told when the record is written; an unused one is closed and leaves the log as it was."""

from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest
from test_log_library import artifact

from ore.log import Ahead, LogError, find, list_turns, record


def test_a_record_taking_the_log_opened_ahead_is_the_record_without_it(tmp_path: Path) -> None:
    ahead_log, plain_log = tmp_path / "ahead" / "log.db", tmp_path / "plain" / "log.db"
    ahead_log.parent.mkdir()
    plain_log.parent.mkdir()
    for n in range(3):
        turn = artifact(f"q{n}", n=n)
        assert record(turn, path=ahead_log, ahead=Ahead(ahead_log)) == n + 1
        assert record(turn, path=plain_log) == n + 1
    assert list_turns(path=ahead_log) == list_turns(path=plain_log)
    assert find(2, path=ahead_log) == find(2, path=plain_log)
    assert ahead_log.stat().st_mode & 0o777 == 0o600


def test_the_log_is_opened_in_a_thread_as_soon_as_it_is_asked(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    opened = threading.Event()
    names: list[str] = []
    original = sqlite3.connect  # the thread opens it with _sqlite3.connect: watched by name
    import _sqlite3

    def watched(*args: object, **kwargs: object) -> object:
        writable = "mode=ro" not in str(args[0])
        names.append(threading.current_thread().name if writable else "read-only")
        opened.set()
        return original(*args, **kwargs)  # type: ignore[arg-type]

    saved = _sqlite3.connect
    _sqlite3.connect = watched  # type: ignore[assignment]
    try:
        ahead = Ahead(path)
        assert opened.wait(10)  # before any record asks for it
        assert names == ["ore-log-open"]
        assert path.exists()
        record(artifact(), path=path, ahead=ahead)
    finally:
        _sqlite3.connect = saved
    # the record opened no writer of its own: only the read-only one that keeps its close
    # from checkpointing (`close_written`)
    assert names == ["ore-log-open", "read-only"]
    assert [turn.prompt for turn in list_turns(path=path)] == ["hi"]


@pytest.mark.parametrize("hostile", ["garbage", "fifo", "folder"])
def test_a_log_that_cannot_be_opened_is_the_record_s_one_error(tmp_path: Path, hostile) -> None:
    path = tmp_path / "log.db"
    if hostile == "garbage":
        path.write_bytes(b"not a database at all " * 100)
    elif hostile == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    ahead = Ahead(path)  # opening fails in the thread: nothing is raised here
    with pytest.raises(LogError) as ahead_error:
        record(artifact(), path=path, ahead=ahead)
    with pytest.raises(LogError) as plain_error:
        record(artifact(), path=path)
    assert ahead_error.value.message == plain_error.value.message
    if hostile == "garbage":
        assert path.read_bytes() == b"not a database at all " * 100


def test_an_unused_log_is_closed_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    record(artifact(), path=path)
    before = sorted(p.name for p in tmp_path.iterdir())
    fds = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    ahead = Ahead(path)
    ahead._thread.join()  # opened (the turn then failed: no record takes it)
    ahead.close()
    if fds is not None:
        assert len(os.listdir("/proc/self/fd")) == fds  # no descriptor of the log left open
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("SELECT count(*) FROM turns").fetchone() == (1,)
