"""docs/invariants.md and the tests marked `invariant` name each other, one to one."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "invariants.md"


def _is_invariant_mark(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return isinstance(target, ast.Attribute) and target.attr == "invariant"


def _marked_tests() -> set[str]:
    found = set()
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_marked = any(
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
            and "invariant" in ast.unparse(node.value)
            for node in tree.body
        )
        for node in ast.walk(tree):
            is_test = isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
            if is_test and (
                module_marked or any(_is_invariant_mark(d) for d in node.decorator_list)
            ):
                found.add(f"{path.relative_to(ROOT).as_posix()}::{node.name}")
    return found


def _documented_tests() -> set[str]:
    return set(re.findall(r"`(tests/(?:\w+/)?test_\w+\.py::\w+)`", DOC.read_text(encoding="utf-8")))


def test_every_invariant_test_is_named_in_the_doc() -> None:
    missing = _marked_tests() - _documented_tests()
    assert not missing, f"marked invariant but not in docs/invariants.md: {sorted(missing)}"


def test_every_test_the_doc_names_exists_and_is_marked_invariant() -> None:
    unknown = _documented_tests() - _marked_tests()
    assert not unknown, f"named in docs/invariants.md but not a marked test: {sorted(unknown)}"
