"""The codebase graph: a tree-sitter index of a source tree, file -> file edges, and queries.

Usable on its own (no CLI, no model): `open_graph(root).top_files(10)`. The index is cached under
`$ORE_HOME/cache/graph/` and refreshed before every query, so answers are never stale.
"""

from __future__ import annotations

import importlib
from typing import Any

# Names are imported on first use (PEP 562), so `ore graph --help` and `import ore.graph.ops`
# do not pay for the index, tree-sitter or the result types.
_EXPORTS: dict[str, str] = {
    "CodeGraph": "graph",
    "open_graph": "graph",
    "Index": "index",
    "load_index": "index",
    "Edge": "records",
    "FileIndex": "records",
    "Import": "records",
    "Symbol": "records",
    "Chunk": "results",
    "Community": "results",
    "Context": "results",
    "Cycle": "results",
    "DependencyPath": "results",
    "FileScore": "results",
    "GraphStats": "results",
    "Hits": "results",
    "Neighbor": "results",
    "Score": "results",
    "SearchHit": "results",
    "SymbolMatch": "results",
    "CloneGroup": "results",
    "Consistency": "results",
    "Convention": "results",
    "Deviation": "results",
    "FileHits": "results",
    "FileInfo": "results",
    "Occurrence": "results",
    "Pattern": "results",
    "PlaceCommunity": "results",
    "PlaceFile": "results",
    "Placement": "results",
    "Signature": "results",
    "SimilarMatch": "results",
    "SnippetMatch": "results",
}

__all__ = [
    "Chunk",
    "CloneGroup",
    "CodeGraph",
    "Community",
    "Consistency",
    "Context",
    "Convention",
    "Cycle",
    "DependencyPath",
    "Deviation",
    "Edge",
    "FileHits",
    "FileIndex",
    "FileInfo",
    "FileScore",
    "GraphStats",
    "Hits",
    "Import",
    "Index",
    "Neighbor",
    "Occurrence",
    "Pattern",
    "PlaceCommunity",
    "PlaceFile",
    "Placement",
    "Score",
    "SearchHit",
    "Signature",
    "SimilarMatch",
    "SnippetMatch",
    "Symbol",
    "SymbolMatch",
    "load_index",
    "open_graph",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ore.graph' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
