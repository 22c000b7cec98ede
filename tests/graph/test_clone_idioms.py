"""Exact runs that are idiom, not copies (`judgment.trivial.idiom_run`, issue 25): the brackets
between rows of a data table and an import list of the minimum lines are not reported; the same
rows holding statements are, and so are an exact copy of logic and a longer import list
(`symilar -d 5`, the recall reference, reports lists of more than five lines)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ore.graph import open_graph
from ore.graph.judgment import runs, trivial
from ore.graph.judgment.trivial import idiom_run, import_lines

_IMPORTS = """from __future__ import annotations

from typing import Any
from typing import Optional
from typing import Sequence
from typing import TYPE_CHECKING
from typing import Union
from .base import {name}
"""

_LOGIC = """

def total(orders, limit):
    seen = [order.price * order.quantity for order in orders if order.paid]
    if sum(seen) > limit:
        raise ValueError("over the limit", sum(seen), limit)
    return {name}(seen, key=lambda x: -x)
"""


def _pair(
    root: Path, text: str, kinds: tuple[str, ...] = ("exact",)
) -> list[set[tuple[str, int, int]]]:
    (root / "pkg").mkdir(parents=True, exist_ok=True)
    (root / "pkg" / "one.py").write_text(text.format(name="alpha"))
    (root / "pkg" / "two.py").write_text(text.format(name="beta"))
    groups = open_graph(root).duplicates(kinds=kinds)
    return [{(o.path, o.start, o.end) for o in c.occurrences} for c in groups]


def test_an_import_list_is_reported_as_symilar_reports_it(tmp_path: Path) -> None:
    """Dropping import lists took recall against `symilar -d 5` on sqlalchemy from 90.5% to
    78.6%: they stay reported (an exact copy is a copy), and copied logic below them too."""
    assert _pair(tmp_path / "imports", _IMPORTS) == [{("pkg/one.py", 1, 7), ("pkg/two.py", 1, 7)}]
    # its last line differs after `return`: the same text only through a partial line, so
    # renamed (`judgment.exactness`), still reported
    found = _pair(tmp_path / "logic", _IMPORTS + _LOGIC, ("exact", "renamed"))
    assert any(s <= 11 and e >= 14 for group in found for _p, s, e in group)


_ROWS = """ROWS_{name} = [
    (
        "create {name} table",
        {{
            "name": "{name}", "stored": True, "virtual": False, "size": 1,
        }},
    ),
    (
        "create", "table", "{name}-two",
        {{"name": "two"}},
    ),
]
"""

#: The same rows with the brackets' lines holding a statement: reported.
_CALLS = """ROWS_{name} = [
    (
        "create {name} table",
        {{
            "name": "{name}", "stored": True, "virtual": False, "size": 1,
        }},
        make_row(kind, size=1),
        check_row(kind, size=2),
    ),
    (
        "create", "table", "{name}-two",
        {{"name": "two"}},
    ),
]
"""


_SHORT_IMPORTS = """from __future__ import annotations

from typing import Any
from typing import Optional
from typing import Sequence
from typing import Union

VALUE_{name} = 1
"""


def test_an_import_list_of_the_minimum_lines_is_not_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Five import lines (the minimum): the lines every module opens with, reported before the
    rule, not after; a sixth line makes a list `symilar -d 5` reports (more than five lines),
    so ORE does too (test above)."""
    with monkeypatch.context() as patch:  # the version before: no import lines known
        patch.setattr(runs, "import_lines", lambda family, text: frozenset())
        patch.setattr(trivial, "RULES", (*trivial.RULES, "before"))
        before = _pair(tmp_path / "before", _SHORT_IMPORTS)
    assert before == [{("pkg/one.py", 1, 6), ("pkg/two.py", 1, 6)}]
    assert _pair(tmp_path / "after", _SHORT_IMPORTS) == []


def test_brackets_between_data_rows_are_not_a_copy(tmp_path: Path) -> None:
    assert _pair(tmp_path / "rows", _ROWS) == []
    found = _pair(tmp_path / "calls", _CALLS)
    assert len(found) == 1 and {p for p, _s, _e in found[0]} == {"pkg/one.py", "pkg/two.py"}


def test_the_rule_itself() -> None:
    """`idiom_run` on a run's whole lines' token counts."""
    assert not idiom_run([4, 4, 4])  # three statements
    assert idiom_run([2, 2, 1, 4, 2])  # brackets around one short statement
    assert not idiom_run([2, 4, 1, 4, 2])  # two statements
    assert not idiom_run([1, 9, 1])  # one long statement
    assert idiom_run([5, 2]) and not idiom_run([5, 2], min_tokens=1)  # tiny runs asked for
    assert idiom_run([4, 5, 5, 5, 5], [True] * 5, min_lines=5)  # a short import list
    assert not idiom_run([4, 5, 5, 5, 5, 5], [True] * 6, min_lines=5)  # symilar reports it
    assert not idiom_run([4, 5, 5, 5, 5], [True] * 4 + [False], min_lines=5)  # code after it
    assert import_lines("python", "import os\nfrom a import (\n    b,\n)\nx = 1\n") == {1, 2, 3, 4}


def test_import_lines_are_where_the_rule_matches_anywhere() -> None:
    """`import_lines` tries its rule only at the start of lines holding the rule's word; the
    lines are those every match of the rule over the whole text holds (`finditer`)."""
    from ore.graph.judgment import trivial

    def everywhere(family: str, text: str) -> set[int]:
        out: set[int] = set()
        for found in trivial._IMPORTS[family].finditer(text):
            first = text.count("\n", 0, found.start()) + 1
            out.update(range(first, first + found.group().count("\n") + 1))
        return out

    texts = {
        "python": "import os, \\\n  sys\nx = 'import y'\n  from a.b import (\n c,\n)\nimportant = 1\n",
        "js": "export { a } from 'b'\nconst x = 1; import('y')\nimport type T from \"m\"\n",
        "go": 'package p\nimport (\n "fmt"\n)\nvar s = "import"\n',
        "rust": "pub(\ncrate) use a::b;\nfn user() {}\n    use c::{\n d,\n};\n",
    }
    for family, text in texts.items():
        assert import_lines(family, text) == everywhere(family, text), family
        assert import_lines(family, text)
