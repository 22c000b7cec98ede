"""The codebase queries as one table (name, the arguments each takes, how it runs), and
`run_query`, which answers one of them as prompt-sized text.

Each op also carries what the other two readers need: `data`, the structured answer, equal to
`ore graph NAME --json` for the same arguments (the CLI's defaults); `about`, what it answers,
written for a model deciding whether to call it; `required`; and `tool`, its name as an MCP tool
(`ore.mcp` derives every tool, input schema and description from this table; "" is no tool).

`run_query(root, "top-files", {"limit": "10"})` answers in a few KB at most, in the spirit of the
Ori body's codebase signature (`op="overview"`, the signature: top files, module communities, key
symbols) and its judgment operations (`duplicates`, `similar`, `conventions`, `consistent`,
`place`). The `codebase` tool (`ore.tools.codebase`) adapts this table; nothing else spells it
out. Importing this module is cheap: the graph itself (tree-sitter, networkx) loads only when a
query runs. Bad ops or arguments, a missing root or an unknown file raise `GraphError`.

The table is built here from its parts: `op` (the row type and the arguments' vocabulary), `args`
(reading an argument's text), `structure_rows` and `judgment_rows` (each row's code). It stays
ONE table, `OPS`, so the three front ends cannot drift.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ...errors import GraphError
from . import judgment_rows, structure_rows
from .op import (
    ARG_ABOUT,
    ARG_CHOICES,
    ARG_KINDS,
    ARG_MIN,
    MAX_CHARS,
    SNIPPET_ARG,
    TOOL_MAX_TOKENS,
    Op,
    to_data,
)

__all__ = [
    "ARG_ABOUT",
    "ARG_CHOICES",
    "ARG_KINDS",
    "ARG_MIN",
    "MAX_CHARS",
    "OPS",
    "SHAPED",
    "SNIPPET_ARG",
    "TOOL_MAX_TOKENS",
    "Op",
    "run_query",
    "to_data",
]

OPS: Mapping[str, Op] = dict([judgment_rows.OVERVIEW, *structure_rows.ROWS, *judgment_rows.ROWS])
#: The ops that read every file's lean shape: a cold index shapes the files as it parses them
#: (`open_graph(shapes=True)`), each file parsed once.
SHAPED = frozenset({"duplicates"})


def run_query(root: Path, op: str, args: Mapping[str, str]) -> str:
    """Run one query (`op` in OPS) on the graph of `root` and render it for a prompt."""
    spec = OPS.get(op)
    if spec is None:
        raise GraphError(f"unknown codebase op '{op}'; use one of {', '.join(OPS)}")
    unknown = sorted(set(args) - spec.args)
    if unknown:
        allowed = ", ".join(sorted(spec.args)) or "none"
        raise GraphError(f"op '{op}' takes no argument '{unknown[0]}' (takes: {allowed})")
    from ..graph import open_graph

    text = spec.run(open_graph(root, shapes=op in SHAPED), args)
    if len(text) > MAX_CHARS:
        cut = text.rfind("\n", 0, MAX_CHARS - 40)
        text = text[: cut if cut > 0 else MAX_CHARS - 40] + "\n… (truncated; narrow the query)"
    return text
