"""Saved sessions on disk: each test is a line of the specification of `ore.store`.

Every test works under `tmp_path`; none touches the real home directory.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ore import store as store_module
from ore.errors import StoreError
from ore.paths import ore_home
from ore.store import FileSessionStore, SessionInfo, default_store, validate_name
from ore.store import files as store_files
from ore.store import tail as store_tail
from ore.types import Message, Session

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "home" / "sessions"


@pytest.fixture
def store(root: Path) -> FileSessionStore:
    return FileSessionStore(root)


def turn(text: str) -> list[Message]:
    return [Message("user", text), Message("assistant", f"answer to {text}")]


def on_disk(root: Path, name: str) -> dict:
    return json.loads((root / f"{name}.json").read_text(encoding="utf-8"))


# -- the file format -----------------------------------------------------------------------------


def test_a_session_round_trips_through_the_store(store: FileSessionStore) -> None:
    created = store.open_or_create("work")
    assert store.add("work", turn("one"), new=created) == created.id
    saved = store.load("work")
    assert saved.id == created.id and saved.created_at == created.created_at
    assert [m.content for m in saved.messages] == ["one", "answer to one"]


def test_the_file_has_exactly_upstreams_keys_as_pretty_utf8_json(
    store: FileSessionStore, root: Path
) -> None:
    store.create("work", Session())
    store.append("work", turn("héllo ✓"))
    raw = (root / "work.json").read_bytes()
    data = json.loads(raw.decode("utf-8"))
    assert set(data) == {"id", "created_at", "messages"}
    assert all(set(m) == {"role", "content", "id", "timestamp"} for m in data["messages"])
    assert raw.endswith(b"}\n") and b'\n  "messages": [' in raw
    assert "héllo ✓".encode() in raw


def test_a_file_written_by_upstream_ore_loads(store: FileSessionStore, root: Path) -> None:
    root.mkdir(parents=True)
    upstream = {
        "id": "0b7e3c2a-5d7f-4c1e-9a61-1f2f0c8a9d10",
        "created_at": 1717000000.25,
        "messages": [
            {"role": "user", "content": "hi", "id": "u1", "timestamp": 1717000001},
            {"role": "assistant", "content": "hello", "id": "a1", "timestamp": 1717000002.5},
        ],
    }
    (root / "old.json").write_text(json.dumps(upstream, indent=2))
    session = store.load("old")
    assert session.id == upstream["id"] and session.created_at == 1717000000.25
    assert [(m.role, m.content, m.id) for m in session.messages] == [
        ("user", "hi", "u1"),
        ("assistant", "hello", "a1"),
    ]


def test_text_that_is_not_valid_unicode_is_made_valid_saved_and_read_back(
    store: FileSessionStore,
) -> None:
    # What Python makes of an undecodable command-line byte: a lone surrogate, which no UTF-8
    # file and no server can take. It becomes U+FFFD once, when the message is made.
    text = "bytes from argv: \udcff"
    store.create("odd", Session())
    store.append("odd", [Message("user", text)])
    assert store.load("odd").messages[0].content == "bytes from argv: \ufffd"


# -- finding sessions ----------------------------------------------------------------------------


def test_a_missing_session_is_named_with_where_it_was_looked_for(
    store: FileSessionStore, root: Path
) -> None:
    with pytest.raises(StoreError) as info:
        store.load("nope")
    assert info.value.message == (
        f"no session named 'nope' in {root}; list them with --list-sessions"
    )
    assert info.value.exit_code == 1


def test_reading_creates_nothing(store: FileSessionStore, root: Path) -> None:
    assert not store.exists("nope")
    assert store.list() == []
    with pytest.raises(StoreError):
        store.load("nope")
    assert not root.exists()


def test_save_session_on_an_existing_name_continues_it_and_never_overwrites(
    store: FileSessionStore, root: Path
) -> None:
    first = store.append("work", turn("one"))
    before = (root / "work.json").read_bytes()
    again = store.open_or_create("work")
    assert (root / "work.json").read_bytes() == before
    assert again.id == first.id and again.messages[0].content == "one"


def test_a_new_session_is_written_with_its_first_turn_never_empty(
    store: FileSessionStore, root: Path
) -> None:
    session = store.open_or_create("fresh")  # the folder is made and checked, nothing saved
    assert root.is_dir() and not store.exists("fresh") and session.messages == ()
    store.add("fresh", turn("one"), new=session)
    assert store.load("fresh").messages[0].content == "one"


# -- append-only ---------------------------------------------------------------------------------


@pytest.mark.invariant
def test_append_keeps_every_saved_message_and_adds_only_at_the_end(
    store: FileSessionStore, root: Path
) -> None:
    store.create("work", Session())
    for text in ("one", "two", "three"):
        before = on_disk(root, "work")["messages"]
        store.append("work", turn(text))
        after = on_disk(root, "work")["messages"]
        assert after[: len(before)] == before  # ids, order and content all preserved
        assert [m["content"] for m in after[len(before) :]] == [text, f"answer to {text}"]


@pytest.mark.invariant
def test_append_never_overwrites_turns_another_process_saved(store: FileSessionStore) -> None:
    mine = store.create("shared", Session())
    theirs = FileSessionStore(store.root).load("shared")
    FileSessionStore(store.root).append("shared", turn("theirs"), session_id=theirs.id)
    # Our in-memory view is stale; appending must still keep their turn.
    saved = store.append("shared", turn("mine"), session_id=mine.id)
    contents = [m.content for m in store.load("shared").messages]
    assert contents == ["theirs", "answer to theirs", "mine", "answer to mine"]
    assert saved == store.load("shared")


@pytest.mark.invariant
def test_a_system_message_is_never_stored(store: FileSessionStore, root: Path) -> None:
    store.create("work", Session())
    before = (root / "work.json").read_bytes()
    with pytest.raises(ValueError, match="system"):
        store.append("work", [Message("system", "You are Aya."), Message("user", "hi")])
    assert (root / "work.json").read_bytes() == before


@pytest.mark.invariant
def test_a_file_holding_a_system_message_is_refused_as_corrupt(
    store: FileSessionStore, root: Path
) -> None:
    root.mkdir(parents=True)
    data = Session().to_dict()
    data["messages"] = [Message("user", "hi").to_dict() | {"role": "system"}]
    (root / "s.json").write_text(json.dumps(data))
    with pytest.raises(StoreError, match="corrupt"):
        store.load("s")


def test_retrying_an_append_does_not_duplicate_messages(store: FileSessionStore) -> None:
    store.create("work", Session())
    messages = turn("once")
    store.append("work", messages)
    store.append("work", messages)
    assert [m.id for m in store.load("work").messages] == [m.id for m in messages]


def test_append_refuses_when_the_file_now_holds_another_session(
    store: FileSessionStore, root: Path
) -> None:
    store.create("work", Session())
    before = (root / "work.json").read_bytes()
    with pytest.raises(StoreError, match="another session"):
        store.append("work", turn("lost?"), session_id="some-other-id")
    assert (root / "work.json").read_bytes() == before


def test_append_recreates_a_session_deleted_mid_conversation(store: FileSessionStore) -> None:
    session = store.create("work", Session())
    store.delete("work")
    store.append("work", turn("still saved"), session_id=session.id)
    reloaded = store.load("work")
    assert reloaded.id == session.id and len(reloaded.messages) == 2


_WORKER = """
import sys, time
from pathlib import Path
from ore.store import FileSessionStore
from ore.types import Message

root, tag, count, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
store = FileSessionStore(root)
session = store.load("shared")  # a stale view, as a long-running REPL would hold
while not go.exists():
    time.sleep(0.001)
for i in range(count):
    turn = [Message("user", f"{tag}{i}"), Message("assistant", f"{tag}{i}!")]
    store.append("shared", turn, session_id=session.id)
"""


@pytest.mark.invariant
def test_processes_appending_to_one_session_at_once_lose_nothing(
    store: FileSessionStore, tmp_path: Path
) -> None:
    store.create("shared", Session())
    go, tags, count = tmp_path / "go", "abcd", 40
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(store.root), tag, str(count), str(go)],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in tags
    ]
    time.sleep(0.3)  # let every worker load its view first
    go.touch()
    for worker in workers:
        _, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
    messages = store.load("shared").messages
    assert len(messages) == len(tags) * count * 2
    assert len({m.id for m in messages}) == len(messages)
    pairs = [(messages[i].content, messages[i + 1].content) for i in range(0, len(messages), 2)]
    assert all(answer == question + "!" for question, answer in pairs)  # turns never split
    for tag in tags:
        mine = [q for q, _ in pairs if q.startswith(tag)]
        assert mine == [f"{tag}{i}" for i in range(count)]  # each writer's order kept


_KILLED = """
import os, signal, sys
from ore.store import FileSessionStore
from ore.types import Message
root, mode, size, i = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
store = FileSessionStore(root)
if mode == "torn":  # the third turn's write in place is cut in half by the kill
    real = os.pwrite
    def torn(fd, data, offset):
        if len(data) > 1000:
            real(fd, bytes(data)[: len(data) // 2], offset)
            os.kill(os.getpid(), signal.SIGKILL)
        return real(fd, data, offset)
while True:
    if mode == "torn" and i == 2:
        os.pwrite = torn
    turn = [Message("user", f"q{i} " + "x" * size), Message("assistant", f"a{i} " + "y" * size)]
    store.add("s", turn)
    i += 1
    if mode == "loop":
        print("ready", flush=True)
        mode = "looping"
"""


def _killed_writer(root: Path, mode: str, size: int, first: int = 0) -> subprocess.Popen[bytes]:
    """A process saving turns `first`, `first + 1`, ... to session 's' until it is killed."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    args = [sys.executable, "-c", _KILLED, str(root), mode, str(size), str(first)]
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE)


def _whole_turns(store: FileSessionStore) -> int:
    """How many turns session 's' holds, checking they are the writer's, in order, whole."""
    contents = [m.content.split(" ")[0] for m in store.load("s").messages]
    assert len(contents) % 2 == 0, "half a turn"
    turns = len(contents) // 2
    assert contents == [c for i in range(turns) for c in (f"q{i}", f"a{i}")]
    return turns


def test_a_write_in_place_cut_short_reads_as_the_session_before_it(
    store: FileSessionStore, root: Path
) -> None:
    writer = _killed_writer(root, "torn", 20_000)
    writer.communicate(timeout=60)
    assert writer.returncode == -9
    with pytest.raises(ValueError):
        json.loads((root / "s.json").read_bytes())  # half a turn on disk ...
    assert _whole_turns(store) == 2  # ... read as the session before it
    assert [s.message_count for s in store.list()] == [4]
    assert store.read_bytes("s") == json.dumps(store.load("s").to_dict(), indent=2).encode() + b"\n"
    store.add("s", [Message("user", "q2"), Message("assistant", "a2")])  # goes on from it
    assert _whole_turns(store) == 3
    assert len(json.loads((root / "s.json").read_bytes())["messages"]) == 6  # whole again


@pytest.mark.invariant
def test_a_writer_killed_at_random_moments_never_corrupts_a_session(
    store: FileSessionStore, root: Path
) -> None:
    import random

    chance = random.Random(26)
    turns = 0
    for round_ in range(25):
        writer = _killed_writer(root, "loop", chance.choice([10, 5_000, 200_000]), turns)
        assert writer.stdout is not None and writer.stdout.readline() == b"ready\n"
        time.sleep(chance.uniform(0, 0.03))
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        writer.stdout.close()
        now = _whole_turns(store)  # never corrupt, never half a turn, never a turn lost
        assert now >= turns + 1, f"round {round_}"
        turns = now
        store.rename("s", "t")  # the whole session moves, as it reads
        store.rename("t", "s")
        assert _whole_turns(store) == turns


# -- corrupt and unreadable files ----------------------------------------------------------------

CORRUPT = {
    "not-json": b"{not json",
    "not-an-object": b"[1, 2, 3]\n",
    "messages-not-a-list": b'{"id": "x", "created_at": 1.0, "messages": "hi"}',
    "wrong-type": b'{"id": 7, "created_at": 1.0, "messages": []}',
    "bad-role": b'{"id": "x", "created_at": 1.0, "messages": [{"role": "tool", "content": ""}]}',
    "binary": bytes(range(256)),
    "empty": b"",
    "huge-integer": b'{"id": "x", "created_at": 1' + b"0" * 400 + b', "messages": []}',
    # not JSON at all, though Python reads them: written back, no other reader would
    "nan-kept-aside": b'{"id": "x", "created_at": 1.0, "messages": [], "note": NaN}',
    "infinity-in-a-message": b'{"id": "x", "created_at": 1.0, "messages": [{"role": "user", '
    b'"content": "hi", "id": "m", "timestamp": 1.0, "score": -Infinity}]}',
    "float-beyond-range": b'{"id": "x", "created_at": 1.0, "messages": [], "note": 1e999}',
}


@pytest.mark.parametrize("content", CORRUPT.values(), ids=CORRUPT.keys())
def test_a_corrupt_file_is_reported_with_its_path_and_left_byte_identical(
    store: FileSessionStore, root: Path, content: bytes
) -> None:
    root.mkdir(parents=True)
    path = root / "broken.json"
    path.write_bytes(content)
    for attempt in (
        lambda: store.load("broken"),
        lambda: store.open_or_create("broken"),
        lambda: store.append("broken", turn("more")),
    ):
        with pytest.raises(StoreError) as info:
            attempt()
        assert info.value.message.startswith(f"session file {path} is corrupt (")
        assert info.value.message.endswith("); fix or move it")
        assert info.value.path == str(path)
        assert path.read_bytes() == content
    assert sorted(p.name for p in root.iterdir()) == ["broken.json", "broken.json.lock"]


def test_nan_or_infinity_is_never_written_as_json(store: FileSessionStore, root: Path) -> None:
    saved = store.append("s", turn("one"))
    before = (root / "s.json").read_bytes()
    for value in (float("nan"), float("inf")):
        with pytest.raises(StoreError, match="cannot be saved as JSON"):
            store.append("s", [Message("user", "two", timestamp=value)], session_id=saved.id)
    assert (root / "s.json").read_bytes() == before
    json.loads(before, parse_constant=lambda name: pytest.fail(f"{name} written"))


def test_a_directory_where_the_file_should_be_is_reported_and_left_alone(
    store: FileSessionStore, root: Path
) -> None:
    (root / "dir.json").mkdir(parents=True)
    (root / "dir.json" / "keep").write_text("mine")
    with pytest.raises(StoreError, match=r"is corrupt \(it is a directory\)"):
        store.append("dir", turn("more"))
    assert (root / "dir.json" / "keep").read_text() == "mine"


def test_a_file_over_the_size_limit_is_refused_unread(store: FileSessionStore, root: Path) -> None:
    root.mkdir(parents=True)
    path = root / "big.json"
    with path.open("wb") as handle:
        handle.truncate(store_module.MAX_SESSION_BYTES + 1)  # sparse: costs no disk
    with pytest.raises(StoreError, match=r"is corrupt \(larger than 64 MiB\)"):
        store.append("big", turn("more"))
    assert path.stat().st_size == store_module.MAX_SESSION_BYTES + 1


def test_a_session_that_would_grow_past_the_limit_is_not_written(
    store: FileSessionStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.create("work", Session())
    before = (root / "work.json").read_bytes()
    monkeypatch.setattr(store_files, "MAX_SESSION_BYTES", len(before) + 10)
    with pytest.raises(StoreError, match="would grow past"):
        store.append("work", turn("x" * 100))
    assert (root / "work.json").read_bytes() == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_reported_with_its_path(store: FileSessionStore, root: Path) -> None:
    store.create("locked", Session())
    path = root / "locked.json"
    path.chmod(0)
    try:
        with pytest.raises(StoreError) as info:
            store.append("locked", turn("more"))
        assert info.value.message == (
            f"session file {path} cannot be read (Permission denied); "
            "fix its permissions or move it"
        )
    finally:
        path.chmod(0o600)
    assert store.load("locked").messages == ()


# -- names ---------------------------------------------------------------------------------------

BAD_NAMES = ["", "../x", "a/b", ".hidden", "..", "x" * 101, "a\\b", "nul\0", "a b", "/abs", "é"]
BAD_IDS = ["empty", "dotdot-x", "slash", "hidden", "dotdot", "too-long", "backslash", "nul"]
BAD_IDS += ["space", "absolute", "non-ascii"]


@pytest.mark.parametrize("name", BAD_NAMES, ids=BAD_IDS)
def test_a_bad_name_is_refused_before_any_file_is_touched(tmp_path: Path, name: str) -> None:
    store = FileSessionStore(tmp_path / "sessions")
    calls = [
        lambda: store.load(name),
        lambda: store.exists(name),
        lambda: store.open_or_create(name),
        lambda: store.append(name, turn("hi")),
        lambda: store.delete(name),
    ]
    for call in calls:
        with pytest.raises(StoreError, match="is not a valid session name; a session name is"):
            call()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["work", "a.b-c_D9", "x" * 100, "v1.2"])
def test_good_names_are_accepted(store: FileSessionStore, name: str) -> None:
    assert validate_name(name) == name
    store.create(name, Session())
    assert store.path(name).name == f"{name}.json" and store.exists(name)


def test_a_bad_name_error_is_one_short_line() -> None:
    with pytest.raises(StoreError) as info:
        validate_name("x\n" * 200)
    assert "\n" not in info.value.message and len(info.value.message) < 200


# -- atomic writes and permissions ---------------------------------------------------------------


def test_writes_leave_no_temp_files(store: FileSessionStore, root: Path) -> None:
    store.create("work", Session())
    for text in ("one", "two", "three"):
        store.append("work", turn(text))
    assert sorted(p.name for p in root.iterdir()) == ["work.json", "work.json.lock"]


@pytest.mark.parametrize("how", ["in place", "whole"])
def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp_file(
    store: FileSessionStore, root: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    store.create("work", Session())
    store.append("work", turn("zero"))
    if how == "whole":
        (root / "work.json.lock").write_bytes(b"")  # a file ORE did not write last: whole
    before = (root / "work.json").read_bytes()
    real_pwrite = os.pwrite

    def disk_full(*args: object) -> None:
        raise OSError(28, "No space left on device")

    def half_then_full(fd: int, data: bytes, offset: int) -> int:
        if len(data) > 20:  # the turn, not the undo putting the closing back
            real_pwrite(fd, bytes(data)[: len(data) // 2], offset)
            raise OSError(28, "No space left on device")
        return real_pwrite(fd, data, offset)

    monkeypatch.setattr(store_module.sessionstore.os, "replace", disk_full)
    monkeypatch.setattr(store_tail.os, "pwrite", half_then_full)
    with pytest.raises(StoreError, match=r"cannot write .*work\.json \(No space left on device\)"):
        store.append("work", turn("one"))
    monkeypatch.undo()
    assert (root / "work.json").read_bytes() == before
    assert [m.content for m in store.load("work").messages] == ["zero", "answer to zero"]
    assert sorted(p.name for p in root.iterdir()) == ["work.json", "work.json.lock"]
    store.append("work", turn("two"))  # the next save finds the file whole
    assert [m.content for m in store.load("work").messages][-2:] == ["two", "answer to two"]


def test_the_directory_is_private_and_files_are_owner_only(
    store: FileSessionStore, root: Path
) -> None:
    old = os.umask(0o022)
    try:
        store.create("work", Session())
        store.append("work", turn("secret"))
    finally:
        os.umask(old)
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE((root / "work.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((root / "work.json.lock").stat().st_mode) == 0o600


# -- listing and deleting ------------------------------------------------------------------------


def test_list_shows_each_session_sorted_by_name(store: FileSessionStore, root: Path) -> None:
    beta = store.create("beta", Session())
    alpha = store.create("alpha", Session())
    store.append("alpha", turn("one"))
    (root / "notes.txt").write_text("not a session")
    (root / ".stray.json").write_text("{}")
    infos = store.list()
    assert [(i.name, i.id, i.message_count) for i in infos] == [
        ("alpha", alpha.id, 2),
        ("beta", beta.id, 0),
    ]
    assert infos[0].created_at == alpha.created_at and infos[0].problem is None
    assert infos[0].path == root / "alpha.json"
    assert abs(infos[0].modified - time.time()) < 60


def test_list_names_a_corrupt_session_with_its_problem(store: FileSessionStore, root: Path) -> None:
    store.create("good", Session())
    (root / "bad.json").write_bytes(b"{not json")
    bad, good = store.list()
    assert isinstance(bad, SessionInfo) and bad.name == "bad" and bad.id is None
    assert bad.problem is not None and str(root / "bad.json") in bad.problem
    assert good.name == "good" and good.problem is None


def test_delete_removes_a_session(store: FileSessionStore, root: Path) -> None:
    store.create("gone", Session())
    store.delete("gone")
    assert not store.exists("gone") and list(root.iterdir()) == []
    with pytest.raises(StoreError, match="no session named 'gone'"):
        store.delete("gone")


# -- where sessions live -------------------------------------------------------------------------


def test_ore_home_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORE_HOME", str(tmp_path / "ore"))
    assert ore_home() == tmp_path / "ore"
    assert default_store().root == tmp_path / "ore" / "sessions"


@pytest.mark.parametrize("value", [None, ""], ids=["unset", "empty"])
def test_ore_home_defaults_to_dot_ore_in_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    if value is None:
        monkeypatch.delenv("ORE_HOME", raising=False)
    else:
        monkeypatch.setenv("ORE_HOME", value)
    assert ore_home() == tmp_path / ".ore"


def test_permission_denied_is_reported_even_where_chmod_cannot_cause_it(
    store: FileSessionStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.create("locked", Session())
    path = root / "locked.json"
    before = path.read_bytes()
    real_open = os.open

    def refuse(file: object, flags: int, *args: object) -> int:
        if Path(str(file)) == path and not flags & os.O_CREAT:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(StoreError, match=r"cannot be read \(Permission denied\)"):
        store.append("locked", turn("more"))
    monkeypatch.undo()
    assert path.read_bytes() == before


def test_a_fifo_where_the_file_should_be_is_refused_without_hanging(
    store: FileSessionStore, root: Path
) -> None:
    root.mkdir(parents=True)
    os.mkfifo(root / "pipe.json")
    with pytest.raises(StoreError, match=r"is corrupt \(not a regular file\)"):
        store.load("pipe")
