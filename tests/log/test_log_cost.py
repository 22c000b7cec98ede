"""What recording a turn costs (issue 23): the turn stays in the write-ahead log, with no
checkpoint and so no fsync, until SQLite's automatic checkpoint or a reader that closes last
folds it into the database; and it is as readable, and as safe, as before."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path

import pytest

from ore.artifacts import BackendInfo, ExecutionArtifact
from ore.log import list_turns, record
from ore.log import records as log_records
from ore.types import Message, Response


def artifact(prompt: str, n: int = 0) -> ExecutionArtifact:
    return ExecutionArtifact(
        execution_id=f"cost-{n}",
        timestamp=1_700_000_000.0 + n,
        prompt=prompt,
        model_id="m",
        output=Response(content="an answer", model_id="m"),
        messages=(Message(role="user", content=prompt),),
        ore_version="test",
        backend=BackendInfo("ollama", None),
    )


def _in(path: Path, text: str) -> bool:
    return path.exists() and text.encode() in path.read_bytes()


READ_IN_ANOTHER_PROCESS = """
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
print(db.execute("SELECT prompt FROM turns ORDER BY id").fetchall())
"""


def test_a_record_is_left_in_the_write_ahead_log_and_read_from_there(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    record(artifact("first-prompt-xyzzy"), path=path)
    record(artifact("second-prompt-plugh", 1), path=path)
    wal = Path(f"{path}-wal")
    assert _in(wal, "second-prompt-plugh") and not _in(path, "second-prompt-plugh")
    assert (wal.stat().st_mode & 0o777) == 0o600
    seen = subprocess.run(
        [sys.executable, "-c", READ_IN_ANOTHER_PROCESS, str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "first-prompt-xyzzy" in seen and "second-prompt-plugh" in seen


def test_a_reader_closing_last_checkpoints_the_log(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    record(artifact("kept-prompt-xyzzy"), path=path)
    assert [turn.prompt for turn in list_turns(path=path)] == ["kept-prompt-xyzzy"]
    assert _in(path, "kept-prompt-xyzzy") and not Path(f"{path}-wal").exists()


@pytest.mark.parametrize("folder", ["a?b#c%d", "spaces and ünïcode"])
def test_a_folder_with_uri_characters_keeps_the_record_in_the_log(
    tmp_path: Path, folder: str
) -> None:
    path = tmp_path / folder / "log.db"
    record(artifact("odd-folder-xyzzy"), path=path)
    assert _in(Path(f"{path}-wal"), "odd-folder-xyzzy")
    assert [turn.prompt for turn in list_turns(path=path)] == ["odd-folder-xyzzy"]


def test_without_the_read_only_connection_the_writer_closes_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_records, "_read_only", lambda path: "file:/nonexistent/x.db?mode=ro")
    path = tmp_path / "log.db"
    record(artifact("checkpointed-xyzzy"), path=path)
    assert _in(path, "checkpointed-xyzzy") and not Path(f"{path}-wal").exists()


def test_the_write_ahead_log_is_checkpointed_once_it_holds_a_few_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kept for ever, every opening would read it all again and SQLite's own checkpoint would
    copy it whole at each commit: so it is bounded."""
    monkeypatch.setattr(log_records, "WAL_LIMIT_BYTES", 64 * 1024)
    path = tmp_path / "log.db"
    wal = Path(f"{path}-wal")
    sizes = []
    for n in range(40):
        record(artifact(f"turn-{n}-xyzzy", n), path=path)
        sizes.append(wal.stat().st_size if wal.exists() else 0)
    assert 0 in sizes[1:] and max(sizes) < 64 * 1024 + 80 * 1024  # the limit and one turn
    assert len(list_turns(100, path=path)) == 40


def test_a_document_is_logged_as_its_artifact_would_be(tmp_path: Path) -> None:
    """`record` takes the turn's document (what a one-shot turn hands it: no artifact class
    defined) or an artifact: the same row and the same document either way."""
    kept = artifact("document-or-artifact-xyzzy")
    by_artifact, by_document = tmp_path / "a" / "log.db", tmp_path / "d" / "log.db"
    record(kept, path=by_artifact)
    record(kept.to_dict("ore.exec.v3"), path=by_document)
    rows = []
    for path in (by_artifact, by_document):
        with closing(sqlite3.connect(path)) as db:
            rows.append(
                (
                    db.execute("SELECT * FROM turns").fetchall(),
                    db.execute("SELECT document FROM artifacts").fetchall(),
                    db.execute("SELECT prompt, answer FROM turns_text").fetchall(),
                )
            )
    assert rows[0] == rows[1]
    assert rows[0][0][0][11] == "root" and rows[0][2] == [
        ("document-or-artifact-xyzzy", "an answer")
    ]


LEFT_TO_THE_EXIT = """
import os, sys
from pathlib import Path
from ore.log import record
from ore.artifacts import BackendInfo, ExecutionArtifact
from ore.types import Message, Response
held = []
turn = ExecutionArtifact(
    execution_id="left-open", timestamp=1.0, prompt="left-to-the-exit-xyzzy", model_id="m",
    output=Response(content="an answer", model_id="m"), messages=(Message("user", "q"),),
    ore_version="test", backend=BackendInfo("ollama", None),
)
record(turn, path=Path(sys.argv[1]), until_exit=lambda db: held.append(db) or True)
assert held and held[0].execute("SELECT count(*) FROM turns").fetchone() == (1,)  # still open
os._exit(0)  # as the `ore` program leaves: the connection dropped with the process
"""


def test_a_connection_left_to_the_exit_leaves_the_turn_whole_in_the_write_ahead_log(
    tmp_path: Path,
) -> None:
    """The `ore` program's one-shot turn hands its connection to the exit (`until_exit`): no
    checkpoint and no second connection, and the log is as a writer killed after its commit
    leaves it: whole, the turn in it, readable by the next process."""
    path = tmp_path / "log.db"
    subprocess.run([sys.executable, "-c", LEFT_TO_THE_EXIT, str(path)], check=True)
    assert _in(Path(f"{path}-wal"), "left-to-the-exit-xyzzy")
    assert not _in(path, "left-to-the-exit-xyzzy")  # not checkpointed
    with closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert [turn.prompt for turn in list_turns(path=path)] == ["left-to-the-exit-xyzzy"]


def test_a_lock_is_waited_for_in_slices_between_which_python_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite's own busy wait defers Python's signal handlers: a record waits in slices of
    `BUSY_SLICE_SECONDS`, so a handler (Ctrl-C, SIGTERM) runs within one slice."""
    path = tmp_path / "log.db"
    record(artifact("first"), path=path)
    opened: list[float | None] = []
    real = log_records.connect

    def connect(*args: object, **kwargs: object) -> object:
        opened.append(kwargs.get("busy"))  # type: ignore[arg-type]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(log_records, "connect", connect)
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.45, lambda: holder.execute("COMMIT"))
    release.start()
    try:
        assert record(artifact("second", 1), path=path) == 2
    finally:
        release.join()
        holder.close()
    assert len(opened) >= 3 and set(opened) == {log_records.BUSY_SLICE_SECONDS}
