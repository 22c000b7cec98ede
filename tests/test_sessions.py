"""ore.sessions: turns, fork, rename, remove, listing and its cache, Markdown, the overflow hint.

The store (`ore.store`) does every write; these tests check what the operations promise on
disk: the original of a fork is byte-identical, a refused operation writes nothing, a corrupt
session is reported and left as it is, and listing stays fast and right whatever the cache holds.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from ore import sessions
from ore.errors import StoreError
from ore.store import INDEX_FILE, FileSessionStore
from ore.types import Message, Session


def conversation(turns: int, *, size: int = 0) -> Session:
    messages: list[Message] = []
    for i in range(1, turns + 1):
        messages.append(Message(role="user", content=f"q{i}" + "x" * size))
        messages.append(Message(role="assistant", content=f"a{i}"))
    return Session(messages=tuple(messages))


@pytest.fixture
def store(tmp_path: Path) -> FileSessionStore:
    return FileSessionStore(tmp_path / "sessions")


def saved(store: FileSessionStore, name: str, turns: int, **kw: int) -> Path:
    store.create(name, conversation(turns, **kw))
    return store.path(name)


def corrupt(store: FileSessionStore, name: str, data: bytes = b"{not json") -> Path:
    store.root.mkdir(parents=True, exist_ok=True)
    path = store.path(name)
    path.write_bytes(data)
    return path


def users(session: Session) -> list[str]:
    return [m.content for m in session.messages if m.role == "user"]


# -- turns ---------------------------------------------------------------------------------------


def test_last_turns_keeps_the_last_n_turns_and_the_session_id() -> None:
    whole = conversation(10)
    last = sessions.last_turns(whole, 1)
    assert users(last) == ["q10"] and len(last.messages) == 2 and last.id == whole.id
    assert sessions.last_turns(whole, None) is whole
    assert sessions.last_turns(whole, 99) is whole
    assert sessions.last_turns(whole, 0).messages == ()


def test_turn_slice_is_one_based_and_inclusive() -> None:
    whole = conversation(5)
    assert [m.content for m in sessions.turn_slice(whole.messages, 2, 3)] == [
        "q2",
        "a2",
        "q3",
        "a3",
    ]
    assert [m.content for m in sessions.turn_slice(whole.messages, 5)] == ["q5", "a5"]
    assert sessions.turn_count(whole.messages) == 5


# -- fork, rename, remove ------------------------------------------------------------------------


def test_fork_saves_the_first_turns_and_leaves_the_original_byte_identical(store) -> None:
    path = saved(store, "work", 5)
    before = path.read_bytes()
    forked = sessions.fork(store, "work", "work-b", at=2)
    assert path.read_bytes() == before
    assert users(store.load("work-b")) == ["q1", "q2"] == users(forked)
    assert forked.id != store.load("work").id


def test_fork_out_of_range_or_onto_an_existing_name_writes_nothing(store) -> None:
    saved(store, "work", 3)
    saved(store, "taken", 1)
    taken = store.path("taken").read_bytes()
    for at in (0, 4, -1):
        with pytest.raises(ValueError, match="3 turns"):
            sessions.fork(store, "work", "new", at=at)
    with pytest.raises(StoreError, match="already exists"):
        sessions.fork(store, "work", "taken")
    assert not store.path("new").exists() and store.path("taken").read_bytes() == taken


def test_a_missing_session_names_the_closest_ones(store) -> None:
    saved(store, "release-notes", 1)
    saved(store, "unrelated", 1)
    with pytest.raises(StoreError) as caught:
        sessions.load(store, "release-note")
    assert "did you mean release-notes?" in caught.value.message
    assert "unrelated" not in caught.value.message


def test_rename_moves_the_file_and_refuses_a_taken_name(store) -> None:
    data = saved(store, "old", 2).read_bytes()
    saved(store, "other", 1)
    sessions.rename(store, "old", "new")
    assert store.path("new").read_bytes() == data and not store.path("old").exists()
    with pytest.raises(StoreError, match="already exists"):
        sessions.rename(store, "new", "other")
    assert store.path("new").read_bytes() == data


@pytest.mark.invariant
def test_every_operation_reports_a_corrupt_session_and_leaves_it_untouched(store) -> None:
    path = corrupt(store, "broken")
    saved(store, "good", 1)
    for operation in (
        lambda: sessions.load(store, "broken"),
        lambda: sessions.fork(store, "broken", "copy"),
        lambda: sessions.rename(store, "broken", "fixed"),
        lambda: sessions.remove(store, ["good", "broken"]),
    ):
        with pytest.raises(StoreError, match="corrupt"):
            operation()
        assert path.read_bytes() == b"{not json"
    assert store.path("good").exists()  # rm checks every name before removing any
    assert not store.path("copy").exists() and not store.path("fixed").exists()
    listed = {s.name: s for s in sessions.list_sessions(store)}
    assert listed["broken"].problem is not None and "corrupt" in listed["broken"].problem
    assert path.read_bytes() == b"{not json"


def test_remove_checks_every_name_before_removing_any(store) -> None:
    saved(store, "a", 1)
    saved(store, "b", 1)
    with pytest.raises(StoreError, match="no session named 'zzz'"):
        sessions.remove(store, ["a", "zzz", "b"])
    assert store.path("a").exists() and store.path("b").exists()
    assert sessions.remove(store, ["a", "b", "a"]) == ["a", "b"]
    assert not store.path("a").exists() and not store.path("b").exists()


# -- continue and list ---------------------------------------------------------------------------


def test_latest_is_the_session_written_last_not_created_last(store) -> None:
    saved(store, "first", 1)
    saved(store, "second", 1)
    os.utime(store.path("second"), ns=(1_000_000_000, 1_000_000_000))
    store.append("first", [Message(role="user", content="again")])
    assert sessions.latest(store) == "first"


def test_latest_with_nothing_saved_says_how_to_start(store) -> None:
    with pytest.raises(StoreError, match="--save-session"):
        sessions.latest(store)


def test_list_is_newest_first_with_turns_model_and_first_prompt(store) -> None:
    saved(store, "old", 2)
    os.utime(store.path("old"), ns=(1_000_000_000, 1_000_000_000))
    saved(store, "new", 3)
    sessions.record_model(store, "new", "qwen2.5:0.5b")
    new, old = sessions.list_sessions(store)
    assert (new.name, new.turns, new.messages, new.model, new.first_prompt) == (
        "new",
        3,
        6,
        "qwen2.5:0.5b",
        "q1",
    )
    assert (old.name, old.turns, old.model) == ("old", 2, None)


def test_the_first_prompt_is_cut_to_one_line(store) -> None:
    store.create("s", Session(messages=(Message(role="user", content="line one\nline two " * 20),)))
    (summary,) = sessions.list_sessions(store)
    assert "\n" not in (summary.first_prompt or "") and len(summary.first_prompt or "") <= 72


def test_a_listing_reads_only_sessions_that_changed_since_the_cache_saw_them(
    store, monkeypatch
) -> None:
    for i in range(5):
        saved(store, f"s{i}", 1)
    sessions.list_sessions(store)
    loads: list[str] = []
    real = FileSessionStore.load

    def counting(self: FileSessionStore, name: str) -> Session:
        loads.append(name)
        return real(self, name)

    monkeypatch.setattr(FileSessionStore, "load", counting)
    sessions.list_sessions(store)
    assert loads == []
    store.add("s3", [Message(role="user", content="more")])
    (s3,) = [s for s in sessions.list_sessions(store) if s.name == "s3"]
    assert loads == ["s3"] and s3.turns == 2


@pytest.mark.parametrize(
    "index",
    [
        b"",
        b"\x00\xff garbage",
        b"[]",
        b'{"version": 1, "sessions": []}',
        b'{"version": 1, "sessions": {"s0": {"key": [1, 2], "summary": 7}}}',
        b'{"version": 1, "sessions": {"../evil": {"model": "m"}, "s0": "x"}}',
        b'{"version": 99, "sessions": {}}',
    ],
    ids=["empty", "binary", "list", "wrong-sessions", "wrong-entry", "hostile-names", "version"],
)
def test_a_corrupt_or_hostile_cache_never_breaks_the_listing(store, index: bytes) -> None:
    saved(store, "s0", 2)
    corrupt(store, "bad")
    expected = [(s.name, s.turns, s.problem is None) for s in sessions.list_sessions(store)]
    (store.root / INDEX_FILE).write_bytes(index)
    assert [(s.name, s.turns, s.problem is None) for s in sessions.list_sessions(store)] == expected
    json.loads((store.root / INDEX_FILE).read_text())  # rebuilt


def test_a_stale_cache_entry_is_rebuilt_from_the_file(store) -> None:
    saved(store, "s", 1)
    sessions.list_sessions(store)
    raw = json.loads((store.root / INDEX_FILE).read_text())
    raw["sessions"]["s"]["summary"]["turns"] = 42  # a lie, but keyed to the file as it is
    raw["sessions"]["s"]["key"][0] += 1  # ... no longer: the size differs
    (store.root / INDEX_FILE).write_text(json.dumps(raw))
    assert sessions.list_sessions(store)[0].turns == 1


def test_listing_a_thousand_sessions_one_of_20_mb_stays_fast(store, monkeypatch) -> None:
    store.root.mkdir(parents=True)
    small = json.dumps(conversation(3).to_dict())
    for i in range(1000):
        (store.root / f"s{i:04}.json").write_text(small)
    big = conversation(1000, size=20_000)
    (store.root / "big.json").write_text(json.dumps(big.to_dict()))
    assert (store.root / "big.json").stat().st_size > 20_000_000
    start = time.perf_counter()
    cold = sessions.list_sessions(store)  # reads every file once, fills the cache
    cold_seconds = time.perf_counter() - start
    monkeypatch.setattr(FileSessionStore, "load", lambda *a: pytest.fail("read a session"))
    start = time.perf_counter()
    warm = sessions.list_sessions(store)
    warm_seconds = time.perf_counter() - start
    assert len(warm) == 1001 and warm == cold
    assert {s.turns for s in warm if s.name == "big"} == {1000}
    assert warm_seconds < 1.0, warm_seconds
    assert cold_seconds < 10.0, cold_seconds


# -- Markdown and the overflow hint ---------------------------------------------------------------


def test_markdown_has_role_headings_and_keeps_code_fenced() -> None:
    session = Session(
        messages=(
            Message(role="user", content="show code"),
            Message(role="assistant", content="Here:\n\n```python\nprint(1)\n```"),
            Message(role="user", content="unclosed\n```\nstill code"),
        )
    )
    text = sessions.to_markdown("Session s", session.messages)
    assert text.startswith("# Session s\n")
    assert "## User (turn 1)" in text and "## Assistant (turn 1)" in text
    assert "```python\nprint(1)\n```" in text
    assert text.rstrip().endswith("still code\n```")  # an open fence is closed
    assert "## User (turn 2)" in text


def test_the_overflow_hint_fires_only_when_far_fewer_tokens_were_read() -> None:
    history = conversation(10, size=2000).messages
    sent = (Message(role="system", content="persona"), *history, Message(role="user", content="q"))
    chars = sum(len(m.content) for m in sent)
    assert sessions.overflow_hint(sent, history, {"prompt_eval_count": chars // 4}) is None
    fits = sessions.overflow_hint(sent, history, {"prompt_eval_count": 2048})
    assert fits is not None and 1 <= fits < 10
    assert sessions.overflow_hint(sent, (), {"prompt_eval_count": 10}) is None
    assert sessions.overflow_hint(sent, history, {}) is None
    short = conversation(2).messages
    assert sessions.overflow_hint(short, short, {"prompt_eval_count": 1}) is None
