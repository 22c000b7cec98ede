"""`ore.__all__` names exactly the public API, and every name in it resolves."""

from __future__ import annotations

import subprocess
import sys

import ore


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert ore.__all__ == sorted(ore.__all__)
    for name in ore.__all__:
        assert getattr(ore, name) is not None, name


def test_the_contracts_are_the_ones_in_ore_types() -> None:
    from ore.types import Message, Session

    assert ore.Message is Message and ore.Session is Session


def test_importing_ore_imports_nothing_heavy() -> None:
    code = (
        "import ore, sys; heavy = {'ollama', 'networkx', 'jsonschema', 'yaml', 'httpx', 'tree_sitter'}; "
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_module_declares_all() -> None:
    from pathlib import Path

    root = Path(ore.__file__).parent
    for path in root.rglob("*.py"):
        if path.name in {"__main__.py"} or "bundled_skills" in path.parts:
            continue
        assert "__all__" in path.read_text(encoding="utf-8"), path
