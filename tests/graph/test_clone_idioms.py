"""Exact runs that are idiom, not copies (`judgment.trivial.idiom_run`, issue 25): an import
list and the brackets between rows of a data table are not reported; the same lines made of
statements are, and so is an exact copy of logic."""

from __future__ import annotations

from pathlib import Path

import pytest

from ore.graph import open_graph
from ore.graph.judgment.trivial import idiom_run, import_lines


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORE_HOME", str(tmp_path / "orehome"))


_IMPORTS = """from __future__ import annotations

from typing import Any
from typing import Optional
from typing import Sequence
from typing import TYPE_CHECKING
from typing import Union
from .base import {name}
"""

#: The same lines as statements (`X = typing.X`): what the rule must not take for imports.
_ASSIGNMENTS = """annotations = future.annotations

Any = typing.Any
Optional = typing.Optional
Sequence = typing.Sequence
TYPE_CHECKING = typing.TYPE_CHECKING
Union = typing.Union
base = {name}
"""

_LOGIC = """

def total(orders, limit):
    seen = [order.price * order.quantity for order in orders if order.paid]
    if sum(seen) > limit:
        raise ValueError("over the limit", sum(seen), limit)
    return {name}(seen, key=lambda x: -x)
"""


def _pair(root: Path, text: str) -> list[set[tuple[str, int, int]]]:
    (root / "pkg").mkdir(parents=True, exist_ok=True)
    (root / "pkg" / "one.py").write_text(text.format(name="alpha"))
    (root / "pkg" / "two.py").write_text(text.format(name="beta"))
    groups = open_graph(root).duplicates(kinds=("exact",))
    return [{(o.path, o.start, o.end) for o in c.occurrences} for c in groups]


def test_an_import_list_is_not_a_copy(tmp_path: Path) -> None:
    assert _pair(tmp_path / "imports", _IMPORTS) == []
    # the same shapes as statements: reported (what the rule sees is the import statements)
    assert _pair(tmp_path / "assignments", _ASSIGNMENTS) == [
        {("pkg/one.py", 1, 7), ("pkg/two.py", 1, 7)}
    ]
    # an import list above copied logic: the logic is reported
    (found,) = _pair(tmp_path / "logic", _IMPORTS + _LOGIC)
    assert ("pkg/one.py", 11, 15) in found or any(s <= 11 and e >= 14 for _p, s, e in found)


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


def test_brackets_between_data_rows_are_not_a_copy(tmp_path: Path) -> None:
    assert _pair(tmp_path / "rows", _ROWS) == []
    found = _pair(tmp_path / "calls", _CALLS)
    assert len(found) == 1 and {p for p, _s, _e in found[0]} == {"pkg/one.py", "pkg/two.py"}


def test_the_rule_itself() -> None:
    """`idiom_run` on a run's whole lines: token counts and import flags."""
    assert idiom_run([4, 4, 4], [True, True, True])  # an import list
    assert not idiom_run([4, 4, 4], [True, False, True])  # a statement among them
    assert idiom_run([2, 2, 1, 4, 2])  # brackets around one short statement
    assert not idiom_run([2, 4, 1, 4, 2])  # two statements
    assert not idiom_run([1, 9, 1])  # one long statement
    assert idiom_run([5, 2]) and not idiom_run([5, 2], min_tokens=1)  # tiny runs asked for
    text = "import os\nfrom a import (\n    b,\n    c,\n)\nx = 1\nimportant = 2\n"
    assert import_lines("python", text) == frozenset({1, 2, 3, 4, 5})
    js = 'import {\n  a,\n} from "x";\nexport const y = "z";\nexport { q } from "./q";\n'
    assert import_lines("js", js) == frozenset({1, 2, 3, 5})
    assert import_lines("go", 'package p\n\nimport (\n\t"fmt"\n)\n') == frozenset({3, 4, 5})
