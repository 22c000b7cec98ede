"""Duplicates without flooding: a long clone is one group, not its windows; library clones come
before clones found only in tests (issue 25)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ore.graph import open_graph


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORE_HOME", str(tmp_path / "orehome"))


_BODY = """def {name}(orders, currency, limit):
    seen, total = [], 0
    step = orders.pick(1, currency) + limit
    if step > limit and not seen:
        limit = min(step, limit * 2)
    seen.append((step, currency))
    for item in orders.items(3):
        total += item.price * item.quantity - 4
    {middle} = orders.total(currency)
    while total > limit or {middle}:
        total -= orders.refund(total, "late")
        {middle} = None
    try:
        report = orders.report(total, seen=seen)
    except KeyError as error:
        raise ValueError(f"no report for {{currency}}") from error
    with orders.lock() as held:
        held.write(report, currency=currency)
    return seen, total, [x for x in report if x]
"""


def _body(name: str, middle: str) -> str:
    """A region of 19 lines; `middle` (a local name) is what the copy renamed."""
    return _BODY.format(name=name, middle=middle)


def _tree(root: Path) -> Path:
    (root / "lib").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "lib" / "a.py").write_text("import os\n\n\n" + _body("collect", "paid"))
    (root / "lib" / "b.py").write_text("import sys\n\n\n" + _body("gather", "settled"))
    longer = "".join(f"    value_{k} = make_item({k}, 'x', flag=True)\n" for k in range(30))
    for name in ("test_one.py", "test_two.py"):
        (root / "tests" / name).write_text(f"def test_it():\n{longer}    assert value_0\n")
    return root


def test_a_long_clone_is_one_group_and_library_comes_first(tmp_path: Path) -> None:
    g = open_graph(_tree(tmp_path))
    groups = g.duplicates()
    library = [c for c in groups if any(o.path.startswith("lib/") for o in c.occurrences)]
    assert len(library) == 1  # no exact windows beside the renamed region that holds them
    (one,) = library
    assert [(o.path, o.start, o.end) for o in one.occurrences] == [
        ("lib/a.py", 1, 22),
        ("lib/b.py", 1, 22),
    ]
    assert groups[0] is one  # the test clone is larger, yet comes after the library one
    assert all(o.path.startswith("tests/") for c in groups[1:] for o in c.occurrences)


def test_two_docstrings_around_a_few_lines_are_no_renamed_clone(tmp_path: Path) -> None:
    """Once renamed a docstring is one token: two functions that share a signature and three
    short lines around two different 100-line docstrings are not a clone to report."""
    for name, word in (("first", "apples"), ("second", "pears")):
        doc = "\n".join(f"    The {word} of line {k} say something else." for k in range(100))
        body = f"    value = compute(x)\n    value += y\n    return value, '{word}'\n"
        (tmp_path / f"{name}.py").write_text(f'def {name}(x, y):\n    """\n{doc}\n    """\n{body}')
    assert open_graph(tmp_path).duplicates(kinds=["renamed"]) == []
