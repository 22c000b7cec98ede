"""What recording a turn costs (issue 23): the turn stays in the write-ahead log, with no
checkpoint and so no fsync, until SQLite's automatic checkpoint or a reader that closes last
folds it into the database; and it is as readable, and as safe, as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ore.artifacts import BackendInfo, ExecutionArtifact
from ore.log import db as log_db
from ore.log import list_turns, record
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
    monkeypatch.setattr(log_db, "_read_only", lambda path: "file:/nonexistent/x.db?mode=ro")
    path = tmp_path / "log.db"
    record(artifact("checkpointed-xyzzy"), path=path)
    assert _in(path, "checkpointed-xyzzy") and not Path(f"{path}-wal").exists()


def test_the_write_ahead_log_is_checkpointed_once_it_holds_a_few_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kept for ever, every opening would read it all again and SQLite's own checkpoint would
    copy it whole at each commit: so it is bounded."""
    monkeypatch.setattr(log_db, "WAL_LIMIT_BYTES", 64 * 1024)
    path = tmp_path / "log.db"
    wal = Path(f"{path}-wal")
    sizes = []
    for n in range(40):
        record(artifact(f"turn-{n}-xyzzy", n), path=path)
        sizes.append(wal.stat().st_size if wal.exists() else 0)
    assert 0 in sizes[1:] and max(sizes) < 64 * 1024 + 80 * 1024  # the limit and one turn
    assert len(list_turns(100, path=path)) == 40
