"""Duplicates: planted exact, renamed and structural clones are found; snippets find their origin."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from ore.errors import GraphError
from ore.graph import CodeGraph, open_graph

ORIGINAL = '''def summarize_orders(orders, currency):
    """Total the paid orders of one currency."""
    total = 0
    count = 0
    for order in orders:
        if order.currency != currency:
            continue
        if order.status == "paid":
            total += order.amount * order.quantity
            count += 1
    return {"total": total, "count": count, "currency": currency}
'''

# the same tokens, other layout and comments: an exact clone
EXACT = '''def summarize_orders(orders, currency):
    """Total the paid orders of one currency."""
    total = 0
    count = 0   # how many
    for order in orders:
        if order.currency != currency:
            continue
        if order.status == "paid":
            total += order.amount  *  order.quantity
            count += 1
    return {"total": total, "count": count, "currency": currency}
'''

# every identifier and literal changed, the same token structure: a renamed clone
RENAMED = '''def tally_invoices(invoices, unit):
    """Sum what was settled."""
    acc = 1
    seen = 2
    for inv in invoices:
        if inv.unit != unit:
            continue
        if inv.state == "settled":
            acc += inv.price * inv.items
            seen += 3
    return {"acc": acc, "seen": seen, "unit": unit}
'''

# the same syntax tree, other operators: a structural clone
STRUCTURAL = '''def shrink_stock(rows, zone):
    """Remove what left the zone."""
    left = 9
    moved = 9
    for row in rows:
        if row.zone == zone:
            continue
        if row.kind != "gone":
            left -= row.size // row.step
            moved -= 1
    return {"left": left, "moved": moved, "zone": zone}
'''

UNRELATED = """def greet(name):
    return "hello " + name
"""


def graph(base: Path, files: dict[str, str]) -> CodeGraph:
    root = base / "proj"
    root.mkdir()
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return open_graph(root, jobs=1)


@pytest.fixture
def g(tmp_path: Path) -> CodeGraph:
    return graph(
        tmp_path,
        {
            "shop/orders.py": "import json\n\n\n" + ORIGINAL,
            "shop/report.py": "X = 1\n\n" + EXACT + "\n\n" + UNRELATED,
            "billing/invoices.py": RENAMED,
            "stock/levels.py": STRUCTURAL,
            "tests/test_orders.py": ORIGINAL,
            "tiny/a.py": "def a():\n    return 1\n",
            "tiny/b.py": "def a():\n    return 1\n",
        },
    )


def groups_of(g: CodeGraph, **kwargs: object) -> dict[str, list[set[str]]]:
    out: dict[str, list[set[str]]] = {}
    for group in g.duplicates(**kwargs):  # type: ignore[arg-type]
        out.setdefault(group.kind, []).append({o.path for o in group.occurrences})
    return out


def test_each_kind_of_planted_clone_is_found(g: CodeGraph) -> None:
    found = groups_of(g, min_tokens=50)  # the planted clones' own scale (the default finds less)
    assert {"shop/orders.py", "shop/report.py", "tests/test_orders.py"} in found["exact"]
    assert any("billing/invoices.py" in group for group in found["renamed"])
    structural = next(group for group in found["structural"] if "stock/levels.py" in group)
    assert "shop/orders.py" in structural  # the shape it shares with the original
    assert not any("stock/levels.py" in group for group in found.get("renamed", []))
    assert not any("tiny/a.py" in group for groups in found.values() for group in groups)


def test_a_group_says_where_each_occurrence_is(g: CodeGraph) -> None:
    exact = next(c for c in g.duplicates(kinds=["exact"]))
    where = {o.path: (o.start, o.end) for o in exact.occurrences}
    assert where["shop/orders.py"] == (4, 14)
    assert where["shop/report.py"] == (3, 13)
    assert exact.lines == 11 and exact.tokens >= 50
    assert exact.to_dict()["occurrences"][0].keys() == {"path", "start", "end"}


def _accessors(name: str, count: int) -> str:
    return "".join(
        f"    @property\n    def {name}_{k}(self):\n"
        f'        "Return the {name} {k}."\n'
        f"        value = capi.get_{name}_{k}(self.ptr, byref(c_int()))\n"
        f'        log.debug("{name} %d", value)\n'
        "        check_status(self.ptr, value)\n"
        "        return value\n\n"
        for k in range(count)
    )


def test_periodic_code_gives_groups_of_places_that_do_not_overlap(tmp_path: Path) -> None:
    # five and three renamed copies of a 7-line accessor (four distinct statements, as a
    # renamed run needs): pairs at different shifts of the period have the same length and
    # join through the places they share
    g = graph(
        tmp_path,
        {
            "a.py": "class A:\n    x = 1\n\n"
            + _accessors("alpha", 5)
            + "    def f(self):\n        return 7\n",
            "b.py": "class B:\n    y = 2\n    z = 3\n\n"
            + _accessors("beta", 3)
            + "    def g(self, q):\n        return q + 1\n",
        },
    )
    found = g.duplicates(min_tokens=1, kinds=["renamed"])
    assert any({o.path for o in c.occurrences} == {"a.py", "b.py"} for c in found)
    for c in found:
        places = sorted((o.path, o.start, o.end) for o in c.occurrences)
        assert len(places) >= 2
        for (p1, _s1, e1), (p2, s2, _e2) in pairwise(places):
            assert p1 != p2 or s2 > e1, f"overlapping places in {c}"


DOCTEST = '''    """{summary}

    Examples
    ========

    >>> from shop.orders import summarize_orders, Order
    >>> orders = [Order("EUR", 10, 2, "paid"), Order("EUR", 5, 1, "open")]
    >>> summarize_orders(orders, "EUR")
    {{'total': 20, 'count': 1, 'currency': 'EUR'}}
    """
'''


def test_a_repeated_docstring_is_an_exact_clone(tmp_path: Path) -> None:
    # the same doctest under two functions whose code differs: duplicated text, as jscpd and
    # symilar see it (a docstring is compared as text, line by line)
    g = graph(
        tmp_path,
        {
            "a.py": "def first(orders):\n" + DOCTEST.format(summary="Sum them.") + "    return 1\n",
            "b.py": "X = 2\n\n\ndef second(rows, unit):\n"
            + DOCTEST.format(summary="Count them.")
            + "    return [r for r in rows if r.unit == unit]\n",
        },
    )
    exact = [c for c in g.duplicates(kinds=["exact"]) if len(c.occurrences) == 2]
    where = {o.path: (o.start, o.end) for o in exact[0].occurrences}
    assert where == {"a.py": (4, 11), "b.py": (7, 14)}  # `Examples` to the closing quotes
    renamed = g.duplicates(kinds=["renamed"])
    assert not renamed  # their code is not alike


def test_an_exact_clone_may_start_and_end_inside_a_line(tmp_path: Path) -> None:
    # four equal lines between lines that differ at one end only: the clone takes in the
    # tokens shared at the end of the line before and the start of the line after
    body = (
        "    values = [price * quantity for price, quantity in zip(prices, quantities)]\n"
        "    subtotal = sum(values) - discount(values, customer.level)\n"
        "    taxes = [rate * subtotal for rate in customer.region.tax_rates]\n"
        "    grand_total = round(subtotal + sum(taxes), customer.currency.digits)\n"
    )
    g = graph(
        tmp_path,
        {
            "a.py": "def one(prices, quantities, customer):\n    prices = list(prices)\n"
            + body
            + "    return grand_total, taxes\n",
            "b.py": "def two(prices, quantities, customer):\n    customer.seen = list(prices)\n"
            + body
            + "    return grand_total, None\n",
        },
    )
    # its first and last lines are not the same text: renamed, not exact (`judgment.exactness`)
    assert g.duplicates(kinds=["exact"], min_lines=6) == []
    (clone,) = g.duplicates(kinds=["exact", "renamed"], min_lines=6)
    assert {(o.path, o.start, o.end) for o in clone.occurrences} == {("a.py", 2, 7), ("b.py", 2, 7)}
    assert clone.lines == 6 and clone.kind == "renamed"
    whole = sum(len(line.split()) for line in body.splitlines())  # at least a token per word
    assert clone.tokens > whole
    assert g.duplicates(kinds=["exact", "renamed"], min_lines=7) == []  # only the lines around


def test_a_line_inside_a_docstring_is_lexed_alone_as_its_text_line() -> None:
    # where a clone starts or ends inside a doctest line, the tokens compared are the ones the
    # text lines count there: `>>>` is three marks, not an operator
    from ore.graph.judgment.lexer import lex_text, line_tokens

    source = 'def f():\n    """Doc.\n\n    >>> f(a ** 2) == {"k": 1}\n    """\n'
    numbers, _keys, counts = lex_text("python", source)
    line = source.split("\n")[3]
    assert counts[numbers.index(4)] == len(line_tokens("python", line, prose=True))
    assert line_tokens("python", line)[:2] == [">>>", "f"]  # the same line as code


def test_code_with_another_docstring_is_a_renamed_clone(tmp_path: Path) -> None:
    # the same code under other multi-line docstrings: not the same text, still the same code
    one_line = '    """Total the paid orders of one currency."""\n'
    doc = '    """Total the paid orders.\n\n    Only one currency counts.\n    """\n'
    first = ORIGINAL.replace(one_line, doc)
    second = ORIGINAL.replace(one_line, doc.replace("Only one", "A single"))
    g = graph(tmp_path, {"a.py": first, "b.py": second})
    kinds = {c.kind for c in g.duplicates() if len(c.occurrences) == 2}
    assert "renamed" in kinds
    (renamed,) = [c for c in g.duplicates(kinds=["renamed"])]
    assert {o.path: o.start for o in renamed.occurrences} == {"a.py": 1, "b.py": 1}


def test_tables_are_not_renamed_clones(tmp_path: Path) -> None:
    # two dict literals and two runs of registrations: once names and literals are normalised
    # every line of a table is the same line, which says nothing about copied code
    fields = "".join(f"    {k}: Field{k}Type,\n" for k in range(12))
    shapes = "".join(f"    {k + 100}: Shape{k}Kind,\n" for k in range(12))
    calls = "".join(f'    register("F{k}", {k % 3}, handler_{k})\n' for k in range(10))
    other = "".join(f'    register("G{k}", {k % 2 + 1}, other_{k})\n' for k in range(10))
    g = graph(
        tmp_path,
        {
            "a.py": "FIELDS = {\n" + fields + "}\n\n\ndef setup():\n" + calls,
            "b.py": "SHAPES = {\n" + shapes + "}\n\n\ndef install():\n" + other,
            "c.py": ORIGINAL,
            "d.py": RENAMED,
        },
    )
    renamed = [
        {o.path for o in c.occurrences} for c in g.duplicates(kinds=["renamed"], min_tokens=1)
    ]
    assert renamed == [{"c.py", "d.py"}]


def test_a_clone_that_starts_with_boilerplate_is_found_from_its_start(tmp_path: Path) -> None:
    # a five-line heading seen in 70 files is boilerplate (never a clone by itself); two of
    # the files go on alike after it: their clone is found, heading included
    heading = "import os\nimport sys\nimport json\nimport logging\nimport pathlib\n"
    files = {f"pkg/m{k}.py": heading + f"\n\ndef f{k}():\n    return {k}\n" for k in range(70)}
    tail = (
        "\n\ndef load(path):\n    with open(path) as handle:\n"
        "        data = json.load(handle)\n    logging.info('loaded %s', path)\n"
        "    return {key: value for key, value in data.items() if key}\n"
    )
    files["pkg/m1.py"] = heading + tail
    files["pkg/m2.py"] = heading + tail
    g = graph(tmp_path, files)
    found = [
        c
        for c in g.duplicates(kinds=["exact"], min_tokens=20)
        if {o.path for o in c.occurrences} == {"pkg/m1.py", "pkg/m2.py"}
    ]
    assert [(o.start, o.end) for o in found[0].occurrences] == [(1, 12), (1, 12)]
    assert not any(len(c.occurrences) > 2 for c in g.duplicates(kinds=["exact"], min_tokens=1))


def test_tests_can_be_left_out_and_minimums_apply(g: CodeGraph) -> None:
    found = groups_of(g, exclude_tests=True)
    assert {"shop/orders.py", "shop/report.py"} in found["exact"]
    assert not any("tests/test_orders.py" in grp for groups in found.values() for grp in groups)
    assert g.duplicates(min_tokens=500) == []
    assert groups_of(g, min_lines=2, min_tokens=1)["exact"]  # now the tiny ones count
    assert {"tiny/a.py", "tiny/b.py"} in groups_of(g, min_lines=2, min_tokens=1)["exact"]


def test_paths_limit_the_search(g: CodeGraph) -> None:
    found = groups_of(g, paths=["shop", "billing"])
    assert found["exact"] == [{"shop/orders.py", "shop/report.py"}]
    assert all(
        not p.startswith(("stock/", "tests/")) for gs in found.values() for s in gs for p in s
    )


def test_largest_groups_come_first(g: CodeGraph) -> None:
    # most tokens first: real code before long runs of stubs under differing docstrings
    sizes = [(c.tokens, c.lines) for c in g.duplicates(min_lines=2, min_tokens=1)]
    assert sizes == sorted(sizes, reverse=True)


def test_a_renamed_snippet_finds_its_original_first(g: CodeGraph) -> None:
    snippet = RENAMED.replace("tally_invoices", "count_paid").replace("inv", "entry")
    best = g.duplicates_of(snippet)[0]
    assert best.kind == "renamed" and best.score == 1.0
    assert best.path == "billing/invoices.py" or best.name == "summarize_orders"
    exact = g.duplicates_of(ORIGINAL, exclude_tests=True)
    assert exact[0].kind == "exact" and exact[0].path in {"shop/orders.py", "shop/report.py"}
    assert {m.path for m in exact if m.kind == "exact"} == {"shop/orders.py", "shop/report.py"}


def test_a_structural_snippet_is_reported_as_such(g: CodeGraph) -> None:
    snippet = STRUCTURAL.replace("shrink_stock", "other_name")
    kinds = {(m.path, m.kind) for m in g.duplicates_of(snippet)}
    assert ("stock/levels.py", "renamed") in kinds
    assert ("shop/orders.py", "structural") in kinds


def test_an_unrelated_snippet_matches_nothing(g: CodeGraph) -> None:
    assert g.duplicates_of("def f(a, b):\n    return a ** b\n") == []


@pytest.mark.parametrize(
    ("snippet", "message"),
    [
        ("def broken(:\n    pass\n", r"does not parse as python \(line 1\)"),
        (b"\x00\x01binary", "binary"),
        (b"\xff\xfe not utf-8", "not UTF-8"),
        ("x = 1\n" * 9_000_000, "limit is 1 MB"),
        ("   \n", "empty"),
        ("# only a comment\n", "no code"),
    ],
)
def test_hostile_snippets_are_one_line_errors(
    g: CodeGraph, snippet: str | bytes, message: str
) -> None:
    with pytest.raises(GraphError, match=message) as info:
        g.duplicates_of(snippet)
    assert "\n" not in info.value.message


def test_an_empty_tree_has_no_duplicates_and_no_snippet_matches(tmp_path: Path) -> None:
    g = graph(tmp_path, {})
    assert g.duplicates() == []
    with pytest.raises(GraphError, match="no source files"):
        g.duplicates_of(ORIGINAL)


def test_bad_parameters_are_graph_errors(g: CodeGraph) -> None:
    with pytest.raises(GraphError, match="min_lines"):
        g.duplicates(min_lines=1)
    with pytest.raises(GraphError, match="unknown clone kind"):
        g.duplicates(kinds=["fuzzy"])
    with pytest.raises(GraphError, match="unknown language"):
        g.duplicates_of(ORIGINAL, language="cobol")


def test_shapes_are_cached_and_follow_edits(g: CodeGraph) -> None:
    first = groups_of(g)
    again = open_graph(g.root, jobs=1)
    assert groups_of(again) == first
    (g.root / "billing/invoices.py").write_text(UNRELATED)
    edited = open_graph(g.root, jobs=1)
    assert not any("billing/invoices.py" in s for gs in groups_of(edited).values() for s in gs)


def test_shapes_of_many_files_are_computed_in_parallel_alike(tmp_path: Path) -> None:
    from ore.graph.judgment.shapecache import load_shapes
    from ore.graph.judgment.shapes import make_shape

    files = {f"pkg/m{n}.py": ORIGINAL.replace("orders", f"orders{n % 7}") for n in range(60)}
    g = graph(tmp_path, files)
    shapes = load_shapes(g, g.files)  # 60 files: more than the pool's minimum, so forked
    assert list(shapes) == g.files
    for path, shape in shapes.items():
        assert shape == make_shape(path, "python", (g.root / path).read_bytes())
    assert len(g.duplicates(kinds=["exact"], min_tokens=50)) == 7
