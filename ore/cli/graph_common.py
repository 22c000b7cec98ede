"""What every `ore graph` subcommand shares: `--root`, `--json`, `--limit`, opening the graph,
answering through the op table (`ore.graph.ops.OPS`: the one the MCP tools and the `codebase`
tool answer from, so `--json` cannot drift from them), printing one JSON document or a table,
and reading a snippet (`--snippet FILE|-`).

Only click is imported here at start-up; the graph loads inside the command that needs it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .. import _fs
from ..errors import GraphError
from .console import is_terminal, out, visible

if TYPE_CHECKING:
    from ..graph import CodeGraph

__all__ = ["MAX_SNIPPET_INPUT", "answer", "common", "emit", "open_root", "read_snippet", "show"]

F = TypeVar("F", bound=Callable[..., Any])

#: The most a snippet FILE or `-` may hold: a diff can be larger than the code it adds (the
#: code itself, plain or added by a diff, is held to 1 MB by the graph).
MAX_SNIPPET_INPUT = 8 * 1024 * 1024


def common(limit: int | None, *, optional_limit: bool = False) -> Callable[[F], F]:
    """`--json` and `--root`, and `--limit` (default `limit`; with `optional_limit`, no default:
    the command picks one, or shows everything)."""

    def decorate(f: F) -> F:
        f = click.option("--json", "as_json", is_flag=True, help="One JSON document on stdout.")(f)
        f = click.option(
            "--root",
            default=".",
            show_default=True,
            help="The folder to index (git work trees honour .gitignore).",
        )(f)
        if limit is not None or optional_limit:
            f = click.option(
                "--limit",
                type=click.IntRange(min=1),
                default=limit,
                show_default=limit is not None,
                help="At most this many results.",
            )(f)
        return f

    return decorate


def open_root(root: str, *, shapes: bool = False) -> CodeGraph:
    """The graph of `root`, refreshed; a cold index of many files shows a progress line on a
    terminal's stderr (the graph library itself prints nothing). `shapes`: the op reads every
    file's shape (`ore.graph.ops.SHAPED`), made as the index parses."""
    from ..graph import open_graph

    progress = _progress if is_terminal(sys.stderr) else None
    return open_graph(root, progress=progress, shapes=shapes)


def answer(op: str, root: str, **given: str | int | Sequence[str | int] | None) -> Any:
    """The result objects of `op` (an OPS entry) on the graph of `root`, for the options given
    (None, False and empty ones left out), as the table's arguments: text, numbers as text,
    flags as "true", `paths` separated by NUL, other lists by commas."""
    from ..graph.ops import OPS, SHAPED

    spec = OPS[op]
    args: dict[str, str] = {}
    for key, value in given.items():
        if value is None or value is False or value == ():
            continue
        assert key in spec.args | spec.cli, f"op '{op}' takes no '{key}'"
        if value is True:
            args[key] = "true"
        elif isinstance(value, (str, int)):
            args[key] = str(value)
        elif key == "paths":
            args[key] = "".join(f"{p}\0" for p in value)
        else:
            args[key] = ",".join(str(v) for v in value)
    assert spec.answer is not None, f"op '{op}' has no answer"
    return spec.answer(open_root(root, shapes=op in SHAPED), args)


def show(as_json: bool, found: Any, text: Callable[[], str], empty: str | None = None) -> None:
    """An op's result objects as the table's JSON document (`ore.graph.ops.to_data`, the
    MCP tools' too), or `text()` as a table (`empty` when there is nothing)."""
    from ..graph.ops import to_data

    emit(as_json, to_data(found), text, empty)


def _progress(done: int, total: int) -> None:
    from ..graph.index.pool import PARALLEL_MIN

    if total < PARALLEL_MIN:
        return  # quick enough to need no progress line
    end = "\n" if done >= total else ""
    sys.stderr.write(f"\rindexing {done}/{total} files{end}")
    sys.stderr.flush()


def emit(as_json: bool, data: Any, text: Callable[[], str], empty: str | None = None) -> None:
    """`data` as JSON, or `text()` as a table (`empty` when there is no data)."""
    if as_json:
        from ..graph.render.export import json_text  # valid UTF-8 whatever the file names hold
        from .console import json_indent

        doc = json_text(data, indent=json_indent())  # one line in a pipe, as every --json
        out(visible(doc, keep="\n", as_json=True) if is_terminal(sys.stdout) else doc)
    elif empty is not None and not data:
        out(visible(empty))
    else:
        out(visible(text(), keep="\n\t"))


def read_snippet(source: str) -> str:
    """The text of `--snippet FILE` (a regular file, read without blocking, symlinks followed)
    or `--snippet -` (stdin); GraphError (one line) when it cannot be read, is too large, binary
    or not UTF-8."""
    name = "on stdin" if source == "-" else f"'{source}'"
    try:
        if source == "-":
            data = _stdin_bytes()
        else:
            data = _fs.read_regular(source, limit=MAX_SNIPPET_INPUT, follow_symlinks=True)
    except (OSError, ValueError) as exc:
        raise GraphError(f"cannot read the snippet {name}: {_fs.os_error_words(exc)}") from exc
    if len(data) > MAX_SNIPPET_INPUT:
        raise GraphError(
            f"the snippet {name} is over {MAX_SNIPPET_INPUT // (1024 * 1024)} MiB; give the code "
            "itself (at most 1 MB) or a diff of it"
        )
    if b"\0" in data[:8192]:
        raise GraphError(f"the snippet {name} is binary (it holds NUL bytes); give source text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise GraphError(f"the snippet {name} is not UTF-8 text; give source text") from None


def _stdin_bytes() -> bytes:
    if sys.stdin is None:
        raise GraphError("--snippet -: stdin is closed; pipe the code in")
    try:
        fd = sys.stdin.fileno()
    except (OSError, ValueError):  # not a real descriptor (a test harness's stream)
        return bytes(sys.stdin.buffer.read(MAX_SNIPPET_INPUT + 1))
    return _fs.read_fd(fd, limit=MAX_SNIPPET_INPUT)
