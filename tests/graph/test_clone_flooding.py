"""Duplicates without flooding: a long clone is one group, not its windows; library clones come
before clones found only in tests (issue 25)."""

from __future__ import annotations

from pathlib import Path

from ore.graph import open_graph
from ore.graph.judgment.lexer import lex
from ore.graph.judgment.trivial import trivial_run

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


_IDIOM = """def test_{name}():
    rv = parse_range("{a}")
    assert rv.start == {n}
    assert rv.stop is None
    assert rv.to_header() == "{a}"

    rv = parse_range("{b}")
    assert rv.start == {m}
    assert rv.stop is None
    assert rv.to_header() == "{b}"
"""


def _renamed_copy() -> str:
    """What an agent writes when it re-creates `collect`: other names, the same statements."""
    return _body("collect_again", "settled").replace("seen", "found").replace("limit", "cap")


def test_renamed_assert_idioms_are_not_reported_but_a_renamed_copy_is(tmp_path: Path) -> None:
    """Issue 25: two tests running the same four checks over other inputs share a renamed
    run of seven lines and 40 tokens (reported before the rule), but four statement shapes:
    not a copy anyone would merge. The renamed copy of a library function beside them is still reported, and
    found at rank 1 from a snippet by `duplicates --snippet` and `similar --mode shape`."""
    root = _tree(tmp_path)
    (root / "tests" / "test_one.py").write_text(
        _IDIOM.format(name="one", a="0-9", n=0, b="5-", m=5)
    )
    (root / "tests" / "test_two.py").write_text(
        _IDIOM.format(name="two", a="-20", n=-20, b="3-4", m=3)
    )
    g = open_graph(root)
    groups = g.duplicates()
    assert not any(o.path.startswith("tests/") for c in groups for o in c.occurrences)
    (one,) = groups
    assert one.kind == "renamed"
    assert {o.path for o in one.occurrences} == {"lib/a.py", "lib/b.py"}
    snippet = _renamed_copy()
    found = g.duplicates_of(snippet)
    assert (found[0].path, found[0].name) in {("lib/a.py", "collect"), ("lib/b.py", "gather")}
    assert found[0].kind == "renamed" and found[0].score == 1.0
    shaped = g.similar(snippet=snippet, mode="shape")
    assert shaped[0].name in {"collect", "gather"} and shaped[0].score == 1.0


def test_a_run_of_one_statement_shape_is_trivial_and_real_code_is_not() -> None:
    """The one place deciding what a renamed run must hold (`trivial.trivial_run`): distinct
    statements, not tokens; exact copies are not asked (`runs` calls it for renamed runs)."""
    preamble = "".join(f"X{k} = cls.classes.X{k}\nx{k} = cls.tables.x{k}\n" for k in range(4))
    _numbers, _exact, keys, tokens = lex("python", "def setup_mappers(cls):\n" + preamble)
    assert trivial_run(keys, tokens) and trivial_run(keys, tokens, context=True)
    _numbers, _exact, keys, tokens = lex("python", _body("collect", "paid"))
    assert not trivial_run(keys, tokens) and not trivial_run(keys, tokens, context=True)
    checks = _IDIOM.format(name="one", a="0-9", n=0, b="5-", m=5).split("\n", 1)[1]
    _numbers, _exact, keys, tokens = lex("python", checks)
    assert not trivial_run(keys, tokens)  # four statements: enough in library code
    assert trivial_run(keys, tokens, context=True)  # not in tests, which repeat their idioms
