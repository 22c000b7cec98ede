"""Runs that cross a definition's edge (`judgment.cuts.Edges`, issue 25): one test's last lines
with the next test's first ones are two half-copies, not a copy, and are not reported; nor is a
short exact run (under the minimum in whole lines) joining one model's last line to the next
model's head. A copy inside one function, a copy of whole functions, a copied function with its
decorator and an exact run of five whole lines or more still are."""

from __future__ import annotations

from pathlib import Path

import pytest

from ore.graph import open_graph
from ore.graph.judgment import clones

#: Two tests whose bodies differ; the end of the first and the start of the second are the
#: same once renamed as in `_OTHER` (asserts, then `env`, `response` and a header set-up).
_TESTS = """from app import Response, make_env


def test_partial_{name}():
    env = make_env("{name}")
    response = Response("Hello World")
    response.prepare(env, ranges=True, length=11)
    assert response.status == 206
    assert response.data == b"Hello"


def test_out_of_bound_{name}():
    env = make_env("{name}")
    response = Response("Hello World")
    env["RANGE"] = "bytes=6-666"
    with raises(RangeError):
        response.prepare(env)
"""

_OTHER = """from app import Request, make_env


def test_complete_{name}(tmp_path):
    payload = tmp_path.read_bytes()
    checked = Request(payload).check(strict=False)
    assert checked.status == 200
    assert checked.data == b"Hello World"


def test_invalid_{name}():
    env = make_env("{name}x")
    response = Response("Bye")
    env["RANGE"] = "bytes=-"
    assert Response.parse(env) is None
"""

#: A block of logic copied into another function with its names changed.
_LOGIC = """

def settle_{name}(orders, limit):
    seen = [order.price * order.quantity for order in orders if order.paid]
    if sum(seen) > limit:
        raise ValueError("over the limit", sum(seen), limit)
    ranked = sorted(seen, key=lambda x: -x)
    return ranked[: limit // 2]
"""

#: Two methods copied whole into another class, names changed.
_METHODS = """

class {cls}:
    def opened_{name}(self, path, mode="r"):
        handle = self.store.open(path, mode)
        self.handles.append(handle)
        return handle

    def closed_{name}(self):
        for handle in self.handles:
            handle.close()
        self.handles.clear()
"""

#: The end of one function, then a decorated view whose first lines `_LINK` repeats.
_DISPLAY = """

def helper(items):
    count = len(items) * 2
    return [item for item in items if item]


@expose("/display/<uid>")
def display(request, uid):
    url = URL.load(uid)
    if not url:
        raise NotFound()
    return render_template("display.html", url=url)
"""

_LINK = """

def other(items, more):
    merged = items + more
    return [item for item in merged if item]


@expose("/u/<uid>")
def link(request, uid):
    url = URL.load(uid)
    if not url:
        raise NotFound()
    return redirect(url.target, 301)
"""


#: Two test models: the end of `A` (a `)` both end with) and the head of `B` are the same text.
_MODELS = """class A(Base):
    __tablename__ = "a"
    id = Column(Integer, primary_key=True)
    bs = relationship("B", remote_side="A.id")


class B(Base):
    __tablename__ = "b"
    id = Column(Integer, primary_key=True)
    a_id = Column(ForeignKey("a.id"))
    c_id = Column(ForeignKey("c.id"))
"""

_OTHER_MODELS = """class A(Base):
    data = Column(String(50))
    bs = relationship(
        "B", back_populates="a"
    )


class B(Base):
    __tablename__ = "b"
    id = Column(Integer, primary_key=True)
    a_id = Column(ForeignKey("a.id"))
    name = Column(String(30), nullable=False)
"""


def _groups(
    root: Path, one: str, two: str, *, cut: bool = True, kinds: tuple[str, ...] = ("renamed",)
) -> list[set[tuple[str, int, int]]]:
    (root / "tests").mkdir(parents=True, exist_ok=True)
    (root / "tests" / "test_one.py").write_text(one)
    (root / "tests" / "test_two.py").write_text(two)
    if not cut:  # the version before: no edges to cut at (and answers kept apart)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(clones, "_definitions", lambda g, path: [])
            patch.setattr(clones, "CUTS", -1)
            found = open_graph(root).duplicates(kinds=kinds)
    else:
        found = open_graph(root).duplicates(kinds=kinds)
    return [{(o.path, o.start, o.end) for o in c.occurrences} for c in found]


def test_a_run_across_two_tests_is_not_a_copy(tmp_path: Path) -> None:
    one, two = _TESTS.format(name="a"), _OTHER.format(name="b")
    before = _groups(tmp_path / "before", one, two, cut=False)
    assert before == [{("tests/test_one.py", 8, 15), ("tests/test_two.py", 7, 14)}]
    assert _groups(tmp_path / "after", one, two) == []


def test_a_copy_inside_one_function_is_reported(tmp_path: Path) -> None:
    one, two = _TESTS.format(name="a") + _LOGIC.format(name="a"), _LOGIC.format(name="b")
    found = _groups(tmp_path, one, two)
    assert {("tests/test_one.py", 20, 25), ("tests/test_two.py", 3, 8)} in found


def test_whole_functions_copied_are_one_copy(tmp_path: Path) -> None:
    one, two = _METHODS.format(cls="Files", name="a"), _METHODS.format(cls="Pipes", name="b")
    assert _groups(tmp_path, one, two) == [
        {("tests/test_one.py", 3, 12), ("tests/test_two.py", 3, 12)}
    ]


def test_a_cut_above_a_definition_keeps_its_decorator(tmp_path: Path) -> None:
    """The run starts in the helper before the view (its `return` renames alike) and ends inside
    the view: cut at both edges, the view's part reported from its decorator on."""
    before = _groups(tmp_path / "before", _DISPLAY, _LINK, cut=False)
    assert before == [{("tests/test_one.py", 5, 12), ("tests/test_two.py", 5, 12)}]
    assert _groups(tmp_path / "after", _DISPLAY, _LINK) == [
        {("tests/test_one.py", 8, 12), ("tests/test_two.py", 8, 12)}
    ]


def test_a_short_exact_run_across_two_models_is_not_a_copy(tmp_path: Path) -> None:
    """Four whole lines and a shared `)`: five lines only through the partial line and the blank
    ones, across A's end and B's head."""
    exact = ("exact",)
    # before, it was reported: renamed, as its partial line differs (`judgment.exactness`)
    both = ("exact", "renamed")
    before = _groups(tmp_path / "before", _MODELS, _OTHER_MODELS, cut=False, kinds=both)
    assert {("tests/test_one.py", 4, 10), ("tests/test_two.py", 5, 11)} in before
    assert _groups(tmp_path / "after", _MODELS, _OTHER_MODELS, kinds=exact) == []


def test_an_exact_run_of_whole_lines_is_not_cut(tmp_path: Path) -> None:
    """Five equal whole lines across A's end and B's head: `symilar -d 5` reports them wherever
    they are, and so does ORE."""
    two = _OTHER_MODELS.replace(
        'bs = relationship(\n        "B", back_populates="a"\n    )',
        'bs = relationship("B", remote_side="A.id")',
    )
    found = _groups(tmp_path, _MODELS, two, kinds=("exact",))
    assert found == [{("tests/test_one.py", 4, 10), ("tests/test_two.py", 3, 9)}]


def test_a_run_with_too_few_statements_has_no_part_with_enough() -> None:
    """A renamed run with too few distinct statements is dropped without being cut at its
    edges (`runs._few`): each of its parts, every slice of its lines, is trivial as well."""
    import random

    from ore.graph.judgment.trivial import few_statements, trivial_run

    rng = random.Random(25)
    for _ in range(3000):
        size = rng.randint(1, 14)
        keys = [rng.randint(0, 6) for _ in range(size)]
        tokens = [rng.randint(1, 7) for _ in range(size)]
        context = rng.random() < 0.5
        if not few_statements(keys, tokens, context=context):
            continue
        assert trivial_run(keys, tokens, context=context)
        for lo in range(size):
            for hi in range(lo + 1, size + 1):
                assert trivial_run(keys[lo:hi], tokens[lo:hi], context=context)
