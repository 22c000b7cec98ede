"""The one listing layer: every list ORE prints (sessions, tools, skills, models, turn logs)
goes through `emit_table`, so each has the same three faces.

- At a terminal: an aligned table with a header, laid out by `rich` (imported only then) to the
  terminal's width; bold header unless `NO_COLOR` is set or `TERM` is `dumb`.
- In a pipe: the machine format, stable TSV *without* a header: one row a line, cells separated
  by one tab, and in each cell a backslash written `\\\\`, a tab `\\t`, a line feed `\\n` and a
  carriage return `\\r` (PostgreSQL's text format), so a row is always one line with a fixed
  number of fields. Columns are only ever added at the end.
- With `--json`: one JSON array (the caller's records, else each row keyed by its lower-cased
  column name), indented at a terminal, one line in a pipe.

Every cell is outside text and passes `console.visible` before it reaches a terminal or a pipe.
`empty` is a line on stderr when there are no rows (never for `--json`: `[]` says it).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence

from .console import is_terminal, note, out, visible

__all__ = ["emit_table", "tsv_cell"]

_TSV_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def tsv_cell(value: object) -> str:
    """One cell of the machine format: `None` is empty, separators escaped, controls visible."""
    text = "" if value is None else str(value)
    return visible(text.translate(_TSV_ESCAPES))


def emit_table(
    columns: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    as_json: bool = False,
    records: Sequence[Mapping[str, object]] | None = None,
    empty: str | None = None,
) -> None:
    """Print a listing on stdout: a table at a terminal, header-free TSV in a pipe, a JSON
    array with `as_json` (`records` if given, else rows keyed by lower-cased column names);
    `empty` on stderr when there is nothing to list (not with `as_json`)."""
    table = [list(row) for row in rows]
    if as_json:
        data = (
            [dict(r) for r in records]
            if records is not None
            else [{c.lower(): v for c, v in zip(columns, row, strict=False)} for row in table]
        )
        _print_json(data)
        return
    if not table:
        if empty:
            note(empty)
        return
    if is_terminal(sys.stdout):
        out(_aligned(columns, table), nl=False)
    else:
        for row in table:
            out("\t".join(tsv_cell(cell) for cell in row))


def _print_json(data: object) -> None:
    """Indented at a terminal (controls as JSON escapes), one line in a pipe: `print_json`."""
    from .console import print_json

    print_json(data, default=str)


def _styled() -> bool:
    return not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def _aligned(columns: Sequence[str], table: list[list[object]]) -> str:
    """The rows laid out by rich as a table the terminal's width, header first."""
    import io
    import shutil

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    styled = _styled()
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=shutil.get_terminal_size((100, 24)).columns,
        force_terminal=styled,
        color_system="standard" if styled else None,
        no_color=not styled,
        highlight=False,
        emoji=False,
        markup=False,
    )
    grid = Table(
        box=None,
        header_style="bold" if styled else "",
        pad_edge=False,
        show_edge=False,
        expand=False,
    )
    for column in columns:
        grid.add_column(column, overflow="fold")
    for row in table:
        cells = [Text(visible("" if cell is None else str(cell), keep="")) for cell in row]
        grid.add_row(*cells)
    console.print(grid)
    return buffer.getvalue()
