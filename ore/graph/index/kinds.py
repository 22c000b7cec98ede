"""What kind of file an indexed path is, beyond its language: a test, or generated code.

Ranking gives tests less weight (`queries.derived`), and the judgments leave tests and generated
files out when asked (`judgment.scope`), so both read these rules from here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Container

from .source import read_source

__all__ = ["is_context", "is_generated", "is_test", "stub_beside_module"]

_TEST_DIRS = frozenset({"test", "tests", "_tests", "testing", "__tests__", "spec", "specs", "e2e"})
_TEST_FILE = re.compile(
    r"(^test_.*\.pyi?$|.*_test\.(py|go)$|^conftest\.py$|.*\.(test|spec)\.[cm]?[jt]sx?$)"
)
_CONTEXT_DIRS = frozenset(
    {"example", "examples", "demo", "demos", "sample", "samples", "doc", "docs", "docs_src"}
    | {"tutorial", "tutorials", "bench", "benchmark", "benchmarks", "fixtures", "testdata"}
)
_GENERATED = re.compile(rb"(?i)(code generated .* do not edit|@generated|auto-?generated)")


def is_test(path: str) -> bool:
    """A test file or test helper: in a test folder, or named like a test (any language)."""
    parts = path.split("/")
    return bool(_TEST_FILE.match(parts[-1])) or any(p in _TEST_DIRS for p in parts[:-1])


def is_context(path: str) -> bool:
    """A test, an example, a doc or a benchmark: code that shows or checks the library rather
    than being it. Judgments rank it after library code unless asked to weigh it equally."""
    parts = path.split("/")
    return is_test(path) or any(p.lower() in _CONTEXT_DIRS for p in parts[:-1])


def is_generated(root: str | os.PathLike[str], path: str) -> bool:
    """A file that says in its first 1 KB that a tool generated it."""
    head = read_source(root, path, limit=1023)
    return head is not None and bool(_GENERATED.search(head))


_DECLARATIONS = (".d.ts", ".d.mts", ".d.cts")
_DECLARED = {
    ".d.ts": (".ts", ".tsx", ".js", ".jsx"),
    ".d.mts": (".mts", ".mjs"),
    ".d.cts": (".cts", ".cjs"),
}


def stub_beside_module(path: str, files: Container[str]) -> bool:
    """Whether `path` is a stub whose module is in the tree too (`recipes.pyi` beside
    `recipes.py`, `widget_color.d.ts` beside `widget_color.js` or `.ts`): a second copy of the
    module's names, no answer of its own (it came back as the name asked about in `similar`,
    ranked above the module in `place`, and was a central file of 0 dependents in
    `signature`)."""
    if path.endswith(".pyi"):
        return path[:-1] in files
    for suffix in _DECLARATIONS:
        if path.endswith(suffix):
            stem = path[: -len(suffix)]
            return any(stem + ext in files for ext in _DECLARED[suffix])
    return False
