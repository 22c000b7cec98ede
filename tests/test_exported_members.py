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


#: The foundation's names, and where their one definition lives.
FOUNDATION = {
    "Message": "ore.types",
    "Response": "ore.types",
    "Session": "ore.types",
    "ToolResult": "ore.types",
    "RoutingTarget": "ore.turn_types",
    "RoutingDecision": "ore.turn_types",
    "SkillMetadata": "ore.types",
    "ExecutionArtifact": "ore.artifacts",
    "execute": "ore.core",
}


def test_the_foundations_names_are_importable_from_ore() -> None:
    import importlib

    for name, module in FOUNDATION.items():
        assert name in ore.__all__, name
        assert getattr(ore, name) is getattr(importlib.import_module(module), name), name
    code = f"from ore import {', '.join(FOUNDATION)}; print(callable(execute))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_every_name_the_upstream_mapping_names_exists() -> None:
    """docs/architecture.md maps upstream's Python names to ours: each of ours resolves."""
    import importlib
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "architecture.md").read_text()
    section = doc.split("## Upstream's Python names", 1)[1]
    rows = [line.split("|") for line in section.splitlines() if line.startswith("| `")]
    names = [n for row in rows for n in re.findall(r"`(ore\.[\w.]+)`", row[2])]
    assert len(rows) >= 20 and len(names) >= 25
    for dotted in names:
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
            break
        else:  # pragma: no cover
            raise AssertionError(dotted)
