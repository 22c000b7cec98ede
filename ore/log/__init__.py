"""The turn log: every completed turn kept in `$ORE_HOME/log.db` (SQLite, WAL, 0600) as its
execution artifact plus the columns a listing needs, searchable (FTS5) and replayable.

    from ore.log import list_turns, load_artifact

    for turn in list_turns(3):
        print(turn.id, turn.model, turn.prompt)
    artifact = load_artifact(-1)  # the latest turn, exact enough to replay

- `db`: opening the file safely (what is refused, the busy timeout, WAL), and the schema as
  numbered migrations.
- `records`: what is kept of a turn (`record`); `rows`: a logged turn read back (`LoggedTurn`).
- `queries`: listings, search, usage, rm, prune, export, and a logged turn as a session.
- `dates`: the dates `--since` and `--before` take.
- `writers`: the records still being written by a turn's child after its exit (`hold`;
  readers `settle` first). Where the log is, `log_path`, is `ore.paths`' to say.

It calls no model, prints nothing and imports neither click nor the CLI. Names load on first
use: a turn pays only for what recording needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ..paths import LOG_NAME, log_path
    from .dates import parse_date
    from .db import SCHEMA_VERSION, LogError, connect
    from .queries import (
        Usage,
        export,
        export_rows,
        find,
        latest,
        list_turns,
        load_artifact,
        prune,
        remove,
        search,
        seed_session,
        usage,
    )
    from .records import excerpt, record
    from .rows import LoggedTurn

__all__ = [
    "LOG_NAME",
    "SCHEMA_VERSION",
    "LogError",
    "LoggedTurn",
    "Usage",
    "connect",
    "excerpt",
    "export",
    "export_rows",
    "find",
    "latest",
    "list_turns",
    "load_artifact",
    "log_path",
    "parse_date",
    "prune",
    "record",
    "remove",
    "search",
    "seed_session",
    "usage",
]

if not TYPE_CHECKING:  # type checkers see the imports above
    __getattr__, __dir__ = exports(
        __name__,
        {
            "parse_date": ".dates",
            "LOG_NAME": "ore.paths",
            "LogError": ".db",
            "connect": ".db",
            "log_path": "ore.paths",
            "Usage": ".queries",
            "export": ".queries",
            "export_rows": ".queries",
            "find": ".queries",
            "latest": ".queries",
            "list_turns": ".queries",
            "load_artifact": ".queries",
            "prune": ".queries",
            "remove": ".queries",
            "search": ".queries",
            "seed_session": ".queries",
            "usage": ".queries",
            "LoggedTurn": ".rows",
            "excerpt": ".records",
            "record": ".records",
            "SCHEMA_VERSION": ".db",
        },
    )
