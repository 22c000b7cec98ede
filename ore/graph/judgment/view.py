"""What a judgment reads of a graph: a narrow view, so that judgment never imports the façade
that calls it.

`CodeGraph` is such a view (its methods hand themselves to the judgment functions); so is any
object with these attributes, a test's stub included. The index is seen through its records
only: each file's `FileIndex` and its external imports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from ..index.records import FileIndex
from ..results import Community

__all__ = ["GraphView", "IndexView"]


class IndexView(Protocol):
    """The index's records: path -> `FileIndex` (in path order), and each file's externals."""

    @property
    def files(self) -> Mapping[str, FileIndex]: ...

    @property
    def externals(self) -> Mapping[str, tuple[str, ...]]: ...


class GraphView(Protocol):
    """A graph as judgment reads it: its root, its files, their records and their ranking."""

    @property
    def root(self) -> Path: ...

    @property
    def files(self) -> Sequence[str]: ...

    @property
    def index(self) -> IndexView: ...

    @property
    def pagerank(self) -> Mapping[str, float]: ...

    def communities(self) -> list[Community]: ...

    def resolve_file(self, file: str) -> str: ...
