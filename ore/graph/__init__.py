"""The codebase graph: a tree-sitter index of a source tree, file -> file edges, and queries.

Usable on its own (no CLI, no model): `open_graph(root).top_files(10)`. The index is cached under
`$ORE_HOME/cache/graph/` and refreshed before every query, so answers are never stale.
"""

from __future__ import annotations

from .graph import CodeGraph, open_graph
from .index import Index, load_index
from .records import Edge, FileIndex, Import, Symbol
from .results import (
    Chunk,
    Community,
    Context,
    Cycle,
    DependencyPath,
    FileScore,
    GraphStats,
    Hits,
    Neighbor,
    Score,
    SearchHit,
    SymbolMatch,
)

__all__ = [
    "Chunk",
    "CodeGraph",
    "Community",
    "Context",
    "Cycle",
    "DependencyPath",
    "Edge",
    "FileIndex",
    "FileScore",
    "GraphStats",
    "Hits",
    "Import",
    "Index",
    "Neighbor",
    "Score",
    "SearchHit",
    "Symbol",
    "SymbolMatch",
    "load_index",
    "open_graph",
]
