"""Write the whole graph as JSON, GraphML, Graphviz DOT or a Mermaid flowchart.

Every export is valid in its format whatever the file names hold. A name is a file system's
bytes: a byte that is not UTF-8 (held as a surrogate escape) is written `\\xNN`, as Python's
`backslashreplace` does, so every document is valid UTF-8 (JSON keeps every other character
exactly, as a JSON escape where needed). In GraphML, DOT and Mermaid a control character is shown
as `\\xNN` too (XML 1.0 cannot hold most of them at all, and a newline would end a Mermaid
line), then each format quotes what it must: XML attributes; in DOT a quote, backslash or `&`
as an HTML entity (`&#92;`); in Mermaid a quote, `#`, `<`, `>`, `&` or backtick as an entity
code (`#34;`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ...errors import GraphError
from ..names import SURROGATE, escape_surrogate, plain_name, shown_name

if TYPE_CHECKING:
    from ..index.load import Index

__all__ = [
    "FORMATS",
    "Exported",
    "export",
    "export_dict",
    "json_text",
]

FORMATS = ("json", "graphml", "dot", "mermaid")
_MERMAID = re.compile('["#<>&`]')
_DOT = re.compile('["\\\\&]')


class Exported(Protocol):
    """What an export reads of a graph: its files and its index (`CodeGraph` is one)."""

    @property
    def files(self) -> Sequence[str]: ...

    @property
    def index(self) -> Index: ...


def json_text(data: Any, *, indent: int | None = 1) -> str:
    """`data` as JSON text that is valid UTF-8 whatever file names it holds (`shown_name`)."""
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    # A lone surrogate can only sit inside a JSON string: its escape's backslash is escaped.
    return (
        SURROGATE.sub(lambda m: "\\" + escape_surrogate(m), text)
        if SURROGATE.search(text)
        else text
    )


def export_dict(graph: Exported) -> dict[str, Any]:
    """`{"nodes": [{"path", "language", ...}], "edges": [{"source", "target", "kind", "weight"}]}`."""
    nodes = [
        {
            "path": shown_name(path),
            "language": record.language,
            "lines": record.lines,
            "symbols": len(record.symbols),
            "externals": list(graph.index.externals.get(path, ())),
        }
        for path, record in graph.index.files.items()
    ]
    edges = [e.to_dict() for e in graph.index.edges]
    for edge in edges:
        edge["source"], edge["target"] = shown_name(edge["source"]), shown_name(edge["target"])
    return {"nodes": nodes, "edges": edges}


def export(graph: Exported, fmt: str) -> str:
    """The graph in `fmt` (one of FORMATS) as text."""
    if fmt == "json":
        return json.dumps(export_dict(graph), indent=1)
    if fmt == "graphml":
        return _graphml(graph)
    if fmt == "dot":
        return _dot(graph)
    if fmt == "mermaid":
        return _mermaid(graph)
    raise GraphError(f"unknown export format '{fmt}'; use one of {', '.join(FORMATS)}")


def _graphml(graph: Exported) -> str:
    from xml.sax.saxutils import quoteattr  # here only: it imports urllib.request (34 ms)

    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">',
        '  <key id="language" for="node" attr.name="language" attr.type="string"/>',
        '  <key id="lines" for="node" attr.name="lines" attr.type="int"/>',
        '  <key id="kind" for="edge" attr.name="kind" attr.type="string"/>',
        '  <key id="weight" for="edge" attr.name="weight" attr.type="double"/>',
        '  <graph id="G" edgedefault="directed">',
    ]
    for path, record in graph.index.files.items():
        out.append(f"    <node id={quoteattr(plain_name(path))}>")
        out.append(f'      <data key="language">{record.language}</data>')
        out.append(f'      <data key="lines">{record.lines}</data>')
        out.append("    </node>")
    for e in graph.index.edges:
        source, target = quoteattr(plain_name(e.source)), quoteattr(plain_name(e.target))
        out.append(f"    <edge source={source} target={target}>")
        out.append(f'      <data key="kind">{e.kind}</data>')
        out.append(f'      <data key="weight">{round(e.weight, 6)}</data>')
        out.append("    </edge>")
    out += ["  </graph>", "</graphml>"]
    return "\n".join(out)


def _dot(graph: Exported) -> str:
    out = ["digraph ore {", "  node [shape=box];"]
    out += [f"  {_dot_id(p)};" for p in graph.files]
    for e in graph.index.edges:
        style = "" if e.kind == "import" else ", style=dashed"
        label = f"weight={round(e.weight, 4)}, kind={e.kind}{style}"
        out.append(f"  {_dot_id(e.source)} -> {_dot_id(e.target)} [{label}];")
    out.append("}")
    return "\n".join(out)


def _mermaid(graph: Exported) -> str:
    ids = {path: f"n{n}" for n, path in enumerate(graph.files)}
    out = ["flowchart LR"]
    out += [f'  {ids[p]}["{_mermaid_label(p)}"]' for p in graph.files]
    for e in graph.index.edges:
        arrow = "-->" if e.kind == "import" else "-.->"
        out.append(f"  {ids[e.source]} {arrow} {ids[e.target]}")
    return "\n".join(out)


def _dot_id(path: str) -> str:
    """A quoted DOT ID without a backslash or a quote in it: those (and `&`) as HTML entity
    codes (`&#92;`), which Graphviz shows as the character. A backslash is not left to DOT's
    own escapes, whose reading of `\\\\"` changed between Graphviz versions."""
    return '"' + _DOT.sub(lambda m: f"&#{ord(m.group())};", plain_name(path)) + '"'


def _mermaid_label(path: str) -> str:
    """The text between `["` and `"]`: a quote, `#`, `<`, `>`, `&` or backtick as an entity
    code (`#34;`), which Mermaid turns back into the character."""
    return _MERMAID.sub(lambda m: f"#{ord(m.group())};", plain_name(path))
