"""`ore.graph.watch.Watch`: what the inotify events name, and whether the files written are
whole (`settled`), which `ore mcp`'s read ahead waits for instead of a quiet window."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ore.graph import serve as serve_module
from ore.graph.serve import WarmGraph
from ore.graph.watch import Watch


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[tuple[Watch, Path]]:
    (tmp_path / "a.py").write_text("x = 1\n")
    watch = Watch.start([str(tmp_path)])
    if watch is None:
        pytest.skip("no inotify here")
    yield watch, tmp_path
    watch.close()


def test_a_file_is_whole_once_its_writer_closes_it(watched: tuple[Watch, Path]) -> None:
    watch, root = watched
    assert watch.settled() and watch.touched() == set()
    with (root / "a.py").open("w") as f:  # emptied, then written: not whole until closed
        f.write("x = 2\n")
        f.flush()
        assert not watch.settled()
        assert not watch.settled()  # asked again: still open
    assert watch.settled()
    assert watch.touched() == {str(root / "a.py")}  # what `settled` drained is handed on
    assert watch.touched() == set()


def test_a_file_renamed_into_place_is_whole(watched: tuple[Watch, Path]) -> None:
    watch, root = watched
    (root / ".a.py.swp").write_text("x = 3\n")  # no language claims it: no event kept
    (root / ".a.py.swp").replace(root / "a.py")
    assert watch.settled()
    assert watch.touched() == {str(root / "a.py")}


def test_a_file_gone_or_a_folder_waits_for_quiet(watched: tuple[Watch, Path]) -> None:
    watch, root = watched
    (root / "a.py").unlink()  # an editor may be about to put it back
    assert not watch.settled()
    watch.quiet()
    assert watch.settled()
    (root / "sub").mkdir()
    assert not watch.settled()
    assert watch.touched() == {str(root / "a.py"), str(root / "sub")}


def test_the_read_ahead_reads_a_closed_file_at_once_and_an_open_one_when_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ore mcp` reads an edit as soon as its writer closes the file, without the quiet
    window (made 30 s here); a file still open is not read half-written."""
    monkeypatch.setenv("ORE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(serve_module._Ahead, "QUIET", 30.0)
    root = tmp_path / "proj"
    root.mkdir()
    (root / "core.py").write_text("def base():\n    return 1\n")
    (root / "user.py").write_text("def use():\n    return 2\n")
    w = WarmGraph(root, ahead=True)
    try:
        w.graph()
        w.graph()
        if w._watch is None:
            pytest.skip("no inotify here")

        def patched(count: int) -> bool:
            deadline = time.monotonic() + 10
            while w.patches < count and time.monotonic() < deadline:
                time.sleep(0.01)
            return w.patches >= count

        (root / "user.py").write_text("from core import base\n\n\ndef use():\n    return base()\n")
        assert patched(1)
        with (root / "user.py").open("w") as f:
            f.write("def use():\n")
            f.flush()
            time.sleep(0.3)
            assert w.patches == 1  # open for writing: not read yet
            f.write("    return 3\n")
        assert patched(2)
        assert w.graph().dependents("core.py") == []
        assert w.patches == 2  # the call found it read
    finally:
        w.close()
