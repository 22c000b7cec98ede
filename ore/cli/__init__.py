"""The one face of ORE: the `ore` command and everything a person sees. It runs turns only
through `ore.turn` (an import contract keeps it so) and decides how they are shown.

- `command`: the click command, `main` and `program` (the executable; `ending`: how it
  exits); `options`: every flag, their conflicts and parsing;
  `voice`: click's usage errors reworded in ORE's one voice.
- `request`: flags into the parts of a `TurnRequest`; `controls`: the turn controls from flags
  and a replayed artifact; `stdin`: the one rule for when a turn reads stdin.
- `turns`: the single turn and the artifact replay or chain; `conversation`: the REPL mode;
  `repl`: reading its lines; `slash`: its slash commands.
- `present`: how a turn's answer and reasoning reach the person; `render`: Markdown at a
  terminal, through ORE's own line-at-a-time renderer `markdown`; `tables`: listings at a
  terminal (the only importer of `rich`, lazily);
  `console`: stdout and stderr, colour, the one writer of stdout and the one `reported()`.
- `help`: `--help` in sections and `ore help [TOPIC]`.
- `listings`: `--list-sessions|tools|skills|models`, each through `tables` (a table at a
  terminal, header-free TSV in a pipe, `--json`); subcommands `graph` (with `graph_common`
  and `graph_judgment`), `session`, `schema` and `skill`.
"""

from __future__ import annotations

from .command import cli, main, program
from .options import Options

__all__ = ["Options", "cli", "main", "program"]
