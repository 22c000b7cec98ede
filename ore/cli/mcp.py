"""`ore mcp [--root DIR]`: serve the codebase graph of DIR to any MCP client over stdio.

Only click is imported at start-up; the SDK (`mcp`, an extra: `pip install 'ore[mcp]'`) and the
graph load when the server starts, so `ore mcp --help` stays instant and no other command pays
for them. A missing SDK or root is one line on stderr and exit 1.
"""

from __future__ import annotations

import click

from ..errors import OreError
from .console import reported

__all__ = ["mcp"]


@click.command(name="mcp")
@click.option(
    "--root",
    default=".",
    show_default=True,
    help="The folder to serve (fixed for the server's life; git work trees honour .gitignore).",
)
def mcp(root: str) -> None:
    """Serve the codebase graph over MCP (stdio) to Claude Code, Cursor, Zed or any agent.

    Every `ore graph` query is a read-only tool (top_files, dependents, find_symbol,
    duplicates, place, get_context, ...) whose result is the same JSON as `ore graph ... --json`.
    The index stays in memory and is refreshed before a call when files changed. Nothing calls a
    model; nothing is written but the index cache. The server ends when stdin closes.

    \b
    Example:
        claude mcp add ore -- ore mcp --root .
        {"mcpServers": {"ore": {"command": "ore", "args": ["mcp", "--root", "/path/to/repo"]}}}
    """
    with reported():
        try:
            from ..mcp.server import serve
        except ImportError as exc:
            if (exc.name or "").partition(".")[0] not in ("mcp", "mcp_types"):
                raise
            raise OreError("ore mcp needs the MCP SDK; pip install 'ore[mcp]'") from None
        serve(root)
