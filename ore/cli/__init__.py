"""The one face of ORE: the `ore` command and everything a person sees.

`command` (the click command and `main`), `options` (flags, their conflicts and parsing),
`console` (stdout, stderr, colour, the one `reported()`), `turns` (single, REPL, artifact
modes), `context` (tools, grants, skills and routing from flags), `listings`, `repl`, `slash`
(the REPL's commands), `render` (Markdown at a terminal), and the `graph`, `session` and
`schema` subcommands. Libraries below never import this package.
"""

from __future__ import annotations

from .command import cli, main
from .options import Options

__all__ = ["Options", "cli", "main"]
