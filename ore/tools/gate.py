"""The permission gate: default-deny, checked before a tool's code can run.

A tool declares the permissions it needs; the user grants permissions with `--grant PERM`. A tool
runs only when every permission it needs was granted. The check happens here, before the tool is
even asked to validate its arguments, so a refused tool's code never executes and no model call
follows. The four permissions are upstream ORE's, exactly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import GateRejected

if TYPE_CHECKING:
    from ..types import ToolResult

__all__ = ["PERMISSIONS", "GatedTool", "check", "missing_permissions", "run_gated"]

PERMISSIONS: tuple[str, ...] = ("filesystem-read", "filesystem-write", "shell", "network")


class GatedTool(Protocol):
    """What the gate needs to know about a tool: its name, what it needs, and how to run it."""

    @property
    def name(self) -> str: ...

    @property
    def permissions(self) -> tuple[str, ...]: ...

    def run(self, args: Mapping[str, Any]) -> ToolResult: ...


def missing_permissions(tool: GatedTool, granted: Iterable[str]) -> tuple[str, ...]:
    """The permissions `tool` needs that were not granted, in the tool's own order."""
    have = {granted} if isinstance(granted, str) else set(granted)
    return tuple(p for p in tool.permissions if p not in have)


def check(tool: GatedTool, granted: Iterable[str]) -> None:
    """Refuse `tool` unless every permission it needs is in `granted` (default-deny).

    :raises GateRejected: naming each missing permission and the flag that grants it.
    """
    missing = missing_permissions(tool, granted)
    if missing:
        flags = " ".join(f"--grant {p}" for p in missing)
        needs = ", ".join(missing)
        noun = "permission" if len(missing) == 1 else "permissions"
        raise GateRejected(
            f"tool '{tool.name}' needs the {noun} {needs}, which was not granted: "
            f"add {flags} to allow it",
            tool=tool.name,
            missing=missing,
        )


def run_gated(tool: GatedTool, args: Mapping[str, Any], granted: Iterable[str]) -> ToolResult:
    """Run `tool` with `args` only if the gate allows it; otherwise its code is never touched."""
    check(tool, granted)
    return tool.run(args)
