"""What only discovery can say, seen by the warm body all the same (an outside tester's breaks):
a source file the index skipped and then fixed, a file made while the graph was opening, and a
`.gitignore` edited; with the inotify watch and with the stat probe alone. Each answer is what
a fresh index says."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ore.graph import open_graph
from ore.graph import serve as serve_module
from ore.graph.serve import WarmGraph

FILES = {
    "a.py": "from b import bee\n\n\ndef ay():\n    return bee()\n",
    "b.py": "def bee():\n    return 1\n",
    "c.py": "def sea():\n    return 2\n",
}


@pytest.fixture(params=["inotify", "stat"])
def mode(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ORE_HOME", str(tmp_path / "home"))
    if request.param == "stat":
        monkeypatch.setattr(serve_module.Watch, "start", classmethod(lambda cls, folders: None))
    return str(request.param)


def _tree(root: Path) -> Path:
    root.mkdir()
    for rel, text in FILES.items():
        (root / rel).write_text(text)
    return root


@pytest.fixture
def warm(mode: str, tmp_path: Path) -> Iterator[WarmGraph]:
    w = WarmGraph(_tree(tmp_path / "proj"))
    w.graph()
    w.graph()  # the check after opening: nothing changed
    yield w
    w.close()


def files(w: WarmGraph) -> list[str]:
    return sorted(w.graph().files)


def _rewrite_in_place(path: Path, data: bytes) -> None:
    """Written through the same file (an editor's in-place save): its folder's mtime stays."""
    with open(path, "r+b") as f:
        f.write(data)
        f.truncate()


@pytest.mark.invariant
@pytest.mark.parametrize("bad", [b"def bee():\n    return 1\n\x00\x00\n", b"x = 1\n" * 900_000])
def test_a_file_skipped_and_then_fixed_is_indexed_again(warm: WarmGraph, bad: bytes) -> None:
    b = warm.root / "b.py"
    _rewrite_in_place(b, bad)  # binary, or past the size limit: skipped
    assert "b.py" not in files(warm)
    _rewrite_in_place(b, FILES["b.py"].encode())
    assert files(warm) == ["a.py", "b.py", "c.py"]
    assert [n.path for n in warm.graph().dependents("b.py")] == ["a.py"]
    assert sorted(open_graph(warm.root).files) == files(warm)


@pytest.mark.invariant
def test_a_file_made_while_the_graph_opens_is_seen(
    mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Discovery has listed the folder; the file comes before the probe reads the folder's
    mtime and before the watch starts: no event will ever name it."""
    root = _tree(tmp_path / "proj")
    real = serve_module.open_graph

    def opened_then_made(*args: object, **kwargs: object) -> object:
        graph = real(*args, **kwargs)  # type: ignore[arg-type]
        (root / "late.py").write_text("def late():\n    return 3\n")
        return graph

    monkeypatch.setattr(serve_module, "open_graph", opened_then_made)
    warm = WarmGraph(root)
    try:
        assert "late.py" not in warm.graph().files  # what discovery saw
        monkeypatch.setattr(serve_module, "open_graph", real)
        assert "late.py" in files(warm)
    finally:
        warm.close()


@pytest.mark.invariant
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_gitignore_edit_is_seen(mode: str, tmp_path: Path) -> None:
    root = _tree(tmp_path / "proj")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    warm = WarmGraph(root)
    try:
        assert files(warm) == ["a.py", "b.py", "c.py"]  # untracked, not ignored: indexed
        (root / ".gitignore").write_text("c.py\n")
        assert files(warm) == ["a.py", "b.py"]
        (root / ".gitignore").write_text("")
        assert files(warm) == ["a.py", "b.py", "c.py"]
    finally:
        warm.close()


@pytest.mark.invariant
def test_an_edit_of_a_linked_files_target_is_seen(mode: str, tmp_path: Path) -> None:
    """`b.py` is a symbolic link to `real_b.txt`: the edit's event names only the target."""
    root = _tree(tmp_path / "proj")
    (root / "b.py").unlink()
    (root / "real_b.txt").write_text(FILES["b.py"])
    (root / "b.py").symlink_to("real_b.txt")
    warm = WarmGraph(root)
    try:
        assert [m.path for m in warm.graph().symbol("bee")] == ["b.py"]
        warm.graph()
        with open(root / "real_b.txt", "a") as f:
            f.write("\n\ndef via_link():\n    return 3\n")
        assert [m.path for m in warm.graph().symbol("via_link")] == ["b.py"]
        assert warm.graph().symbol("via_link") == open_graph(root).symbol("via_link")
    finally:
        warm.close()
