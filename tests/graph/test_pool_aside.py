"""`pool.aside`: a task computed in a forked child gives what it gives in this process, and a
child that fails, or is no longer wanted, never changes the result nor outlives the block."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ore.graph.index import pool

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")


@pytest.fixture(autouse=True)
def two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool, "_cores", lambda: 2)


def _rows(value: list[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    return tuple(value)


def _back(rows: tuple[tuple[str, int], ...]) -> list[tuple[str, int]]:
    return [(str(a), int(b)) for a, b in rows]


def test_the_child_computes_the_task_and_this_process_does_not() -> None:
    parent = os.getpid()
    calls: list[int] = []

    def task() -> list[tuple[str, int]]:
        calls.append(os.getpid())  # a child's list: this process's stays empty
        return [("pid", os.getpid()), ("answer", 42)]

    with pool.aside(task, _rows, _back) as result:
        got = result()
    assert got[1] == ("answer", 42)
    assert got[0][1] != parent  # computed in the child
    assert calls == []


def test_a_failing_child_leaves_the_task_to_this_process() -> None:
    parent = os.getpid()

    def task() -> list[tuple[str, int]]:
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return [("here", 1)]

    with pool.aside(task, _rows, _back) as result:
        assert result() == [("here", 1)]


def test_a_child_that_dies_leaves_the_task_to_this_process() -> None:
    parent = os.getpid()

    def task() -> list[tuple[str, int]]:
        if os.getpid() != parent:
            os._exit(3)
        return [("here", 2)]

    with pool.aside(task, _rows, _back) as result:
        assert result() == [("here", 2)]


def test_not_wanted_or_one_core_computes_here(monkeypatch: pytest.MonkeyPatch) -> None:
    parent = os.getpid()

    def task() -> list[tuple[str, int]]:
        return [("pid", os.getpid())]

    with pool.aside(task, _rows, _back, wanted=False) as result:
        assert result() == [("pid", parent)]
    monkeypatch.setattr(pool, "_cores", lambda: 1)
    with pool.aside(task, _rows, _back) as result:
        assert result() == [("pid", parent)]


def test_a_child_not_asked_for_is_ended_with_the_block(tmp_path: Path) -> None:
    mark = tmp_path / "pid"

    def task() -> list[tuple[str, int]]:
        import time

        mark.write_text(str(os.getpid()))
        time.sleep(60)
        return []

    with pytest.raises(ValueError), pool.aside(task, _rows, _back):
        for _ in range(500):  # the child has started
            if mark.exists() and mark.read_text():
                break
            time.sleep(0.01)
        raise ValueError("the work beside it failed")
    with pytest.raises(ChildProcessError):
        os.waitpid(int(mark.read_text()), os.WNOHANG)  # ended and reaped: not even a zombie


_FUNC = """def {name}(orders, currency, limit):
    seen, total = [], {n}
    step = orders.pick(1, currency) + limit
    if step > limit and not seen:
        limit = min(step, limit * {n})
    seen.append((step, currency))
    for item in orders.items(3):
        total += item.price * item.quantity - 4
    return seen, total
"""


def test_clone_groups_are_the_same_with_a_child_or_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`find_clones` pairs renamed runs and shapes structural groups in a child beside the
    exact pairing (60 files, above `PARALLEL_MIN`): the same groups as in one process. The
    shapes file is written by the child then, and is whole."""
    from ore.graph import open_graph
    from ore.graph.index.cache import cache_path
    from ore.graph.judgment import clones, shapecache

    monkeypatch.setenv("ORE_HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    for k in range(60):  # exact copies, renamed copies (other names and numbers), both kinds
        body = _FUNC.format(name=f"f{k % 3}", n=1) + "\n\n" + _FUNC.format(name=f"g{k}", n=k)
        (root / "pkg" / f"m{k}.py").write_text(f"import os\n\n\n{body}")
    g = open_graph(root)
    found = {}
    for cores in (1, 2):
        monkeypatch.setattr(pool, "_cores", lambda cores=cores: cores)
        cache_path(g.root).with_suffix(".memo").unlink(missing_ok=True)
        shapecache._file(g.root).unlink(missing_ok=True)
        shapecache._MEMO.clear()  # shapes computed afresh, so written again
        found[cores] = clones._clone_rows(g.duplicates())
        assert len(shapecache._read(g.root)) == 60
    assert {row[0] for row in found[1]} >= {"exact", "renamed"}
    assert found[1] == found[2]
