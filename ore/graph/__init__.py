"""The codebase graph: a tree-sitter index of a source tree, file -> file edges, and queries.

Usable on its own (no CLI, no model): `open_graph(root).top_files(10)`. The index is cached under
`$ORE_HOME/cache/graph/` and refreshed before every query, so answers are never stale.

The package is a wing of rooms (docs/graph.md): `index` builds and stores the index, `queries`
answers structure questions and ranks files, `judgment` answers the reviewer's questions,
`render` writes answers as text; `graph.CodeGraph` is the façade over them, `ops` the table of
queries the `codebase` tool runs, `results` what every query returns.

Names are imported on first use (PEP 562, through `ore._lazy`), so `ore graph --help` and
`import ore.graph.ops` pay for none of the index, tree-sitter or the result types. Type checkers
see the real types through the imports under `TYPE_CHECKING`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from .graph import CodeGraph, open_graph
    from .index.load import Index, load_index
    from .index.records import Edge, FileIndex, Import, Symbol
    from .results import (
        Chunk,
        CloneGroup,
        Community,
        Consistency,
        Context,
        Convention,
        Cycle,
        DependencyPath,
        Deviation,
        FileHits,
        FileInfo,
        FileScore,
        GraphStats,
        Hits,
        Neighbor,
        Occurrence,
        Pattern,
        PlaceCommunity,
        PlaceFile,
        Placement,
        Score,
        SearchHit,
        Signature,
        SimilarMatch,
        SnippetMatch,
        SymbolMatch,
    )

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

if not TYPE_CHECKING:  # type checkers see the imports above, and no catch-all __getattr__
    __getattr__, __dir__ = exports(
        __name__,
        {
            "CodeGraph": ".graph",
            "open_graph": ".graph",
            "Index": ".index.load",
            "load_index": ".index.load",
            "Edge": ".index.records",
            "FileIndex": ".index.records",
            "Import": ".index.records",
            "Symbol": ".index.records",
            "Chunk": ".results",
            "Community": ".results",
            "Context": ".results",
            "Cycle": ".results",
            "DependencyPath": ".results",
            "FileScore": ".results",
            "GraphStats": ".results",
            "Hits": ".results",
            "Neighbor": ".results",
            "Score": ".results",
            "SearchHit": ".results",
            "SymbolMatch": ".results",
            "CloneGroup": ".results",
            "Consistency": ".results",
            "Convention": ".results",
            "Deviation": ".results",
            "FileHits": ".results",
            "FileInfo": ".results",
            "Occurrence": ".results",
            "Pattern": ".results",
            "PlaceCommunity": ".results",
            "PlaceFile": ".results",
            "Placement": ".results",
            "Signature": ".results",
            "SimilarMatch": ".results",
            "SnippetMatch": ".results",
        },
    )
