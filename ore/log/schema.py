"""The turn log's schema, as numbered migrations: migration N brings a log at version N-1 to
N. A released migration is never edited; a change is a new one (and a fixture log of the
previous version in tests/data/, which the tests read)."""

from __future__ import annotations

__all__ = ["MIGRATIONS", "SCHEMA_VERSION"]

#: The version this ORE writes; it reads every version up to it.
SCHEMA_VERSION = 1

MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        "CREATE TABLE schema_version (version INTEGER NOT NULL)",
        # AUTOINCREMENT: an id removed by 'ore log rm' is never given to another turn, so
        # 'log:ID' always means one turn or none.
        """CREATE TABLE turns (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            execution_id TEXT NOT NULL UNIQUE,
            time REAL NOT NULL,
            day TEXT NOT NULL,
            model TEXT NOT NULL,
            backend TEXT,
            session TEXT,
            duration REAL,
            tokens_in INTEGER,
            tokens_out INTEGER,
            finish_reason TEXT,
            relation TEXT NOT NULL,
            prompt TEXT NOT NULL
        )""",
        # The documents apart from the columns: listings, filters and usage scan small rows.
        """CREATE TABLE artifacts (
            id INTEGER PRIMARY KEY REFERENCES turns(id),
            document TEXT NOT NULL
        )""",
        "CREATE INDEX turns_by_time ON turns(time)",
        "CREATE INDEX turns_by_model ON turns(model, id)",
        "CREATE INDEX turns_by_session ON turns(session, id)",
        # `ore log usage` reads this index alone: the day (local time, as the turn's process saw
        # it), the model and the token counts.
        "CREATE INDEX turns_by_day ON turns(day, model, tokens_in, tokens_out)",
        "CREATE VIRTUAL TABLE turns_text USING fts5(prompt, answer, tokenize='unicode61')",
    ),
}
