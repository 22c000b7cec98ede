"""Write the whole graph as JSON, GraphML, Graphviz DOT or a Mermaid flowchart."""

from __future__ import annotations

import json
import re
from typing import Any
from xml.sax.saxutils import quoteattr

from ..errors import GraphError
from .graph import CodeGraph

__all__ = ["FORMATS", "export", "export_dict"]

FORMATS = ("json", "graphml", "dot", "mermaid")


def export_dict(graph: CodeGraph) -> dict[str, Any]:
    """`{"nodes": [{"path", "language", ...}], "edges": [{"source", "target", "kind", "weight"}]}`."""
    nodes = [
        {
            "path": path,
            "language": record.language,
            "lines": record.lines,
            "symbols": len(record.symbols),
            "externals": list(graph.index.externals.get(path, ())),
        }
        for path, record in graph.index.files.items()
    ]
    return {"nodes": nodes, "edges": [e.to_dict() for e in graph.index.edges]}


def export(graph: CodeGraph, fmt: str) -> str:
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


def _graphml(graph: CodeGraph) -> str:
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
        out.append(f"    <node id={quoteattr(path)}>")
        out.append(f'      <data key="language">{record.language}</data>')
        out.append(f'      <data key="lines">{record.lines}</data>')
        out.append("    </node>")
    for e in graph.index.edges:
        out.append(f"    <edge source={quoteattr(e.source)} target={quoteattr(e.target)}>")
        out.append(f'      <data key="kind">{e.kind}</data>')
        out.append(f'      <data key="weight">{round(e.weight, 6)}</data>')
        out.append("    </edge>")
    out += ["  </graph>", "</graphml>"]
    return "\n".join(out)


def _dot(graph: CodeGraph) -> str:
    out = ["digraph ore {", "  node [shape=box];"]
    out += [f"  {json.dumps(p)};" for p in graph.files]
    for e in graph.index.edges:
        style = "" if e.kind == "import" else ", style=dashed"
        label = f"weight={round(e.weight, 4)}, kind={e.kind}{style}"
        out.append(f"  {json.dumps(e.source)} -> {json.dumps(e.target)} [{label}];")
    out.append("}")
    return "\n".join(out)


def _mermaid(graph: CodeGraph) -> str:
    ids = {path: f"n{n}" for n, path in enumerate(graph.files)}
    out = ["flowchart LR"]
    out += [f'  {ids[p]}["{_mermaid_label(p)}"]' for p in graph.files]
    for e in graph.index.edges:
        arrow = "-->" if e.kind == "import" else "-.->"
        out.append(f"  {ids[e.source]} {arrow} {ids[e.target]}")
    return "\n".join(out)


def _mermaid_label(path: str) -> str:
    return re.sub(r'["<>\[\]{}|]', "_", path)
