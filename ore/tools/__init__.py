"""Tools: small, explicit pre-reasoning steps whose output reaches one turn and nothing else.

The parts: `base` (the `Tool` type), `gate` (default-deny permissions, checked before a tool's
code runs), `builtin` (`echo`, `read-file`) and `codebase` (one graph query; the graph package
is imported only when it runs). This module is the registry that gathers them.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ..errors import ToolError
from .base import Tool
from .builtin import READ_FILE_LIMIT, echo_tool, read_file_tool
from .codebase import codebase_tool

__all__ = [
    "READ_FILE_LIMIT",
    "TOOL_REGISTRY",
    "Tool",
    "codebase_tool",
    "default_registry",
    "echo_tool",
    "get_tool",
    "read_file_tool",
]


def default_registry() -> dict[str, Tool]:
    """A fresh name -> tool mapping of the built-in tools (callers may add their own)."""
    return {t.name: t for t in (echo_tool(), read_file_tool(), codebase_tool())}


#: The built-in tools, read-only (upstream's name); pass your own mapping to inject others.
TOOL_REGISTRY: Mapping[str, Tool] = MappingProxyType(default_registry())


def get_tool(name: str, registry: Mapping[str, Tool] | None = None) -> Tool:
    """The tool called `name`, or a ToolError listing the ones that exist."""
    tools = TOOL_REGISTRY if registry is None else registry
    tool = tools.get(name)
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        raise ToolError(f"unknown tool {name!r}: available tools are {known} (see --list-tools)")
    return tool
