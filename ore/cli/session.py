"""`ore session list|show|fork|rm|rename|export`: saved sessions as things a person manages.

None of these calls a model: only click and this package's light modules load (the Markdown
renderer only when `show` writes to a terminal). Results go to stdout, confirmations and errors
to stderr; a corrupt session is reported and left as it is, a missing one is exit 1 with the
closest names, a bad `--at` or `--turns` is a usage error (exit 2).

What a session holds is outside text: `list` rows pass `console.visible` wherever they go, and
`show` and `export` pass it when stdout is a terminal (in a pipe they are exactly as stored).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from .console import is_terminal, note, out, print_json, reported, visible
from .help import CONTEXT_SETTINGS
from .options import session_name

if TYPE_CHECKING:
    from ..store import FileSessionStore

__all__ = ["require_saved", "session"]


def _store() -> FileSessionStore:
    from ..sessions import session_store

    return session_store()


def require_saved(name: str) -> None:
    """Session `name` exists; else the error names the closest saved names ("did you mean
    work?"), as every command that takes a session name does. One `lstat`: nothing is read."""
    import os

    from ..sessions import load

    store = _store()
    if not os.path.lexists(store.path(name)):
        load(store, name)  # raises: no session named NAME; did you mean ...


@click.group(name="session", context_settings=CONTEXT_SETTINGS)
def session() -> None:
    """Manage saved sessions ($ORE_HOME/sessions): list, show, fork, rm, rename, export.

    A turn is one prompt and its answer, counted from 1. To talk in a session, use
    'ore --resume-session NAME', or 'ore --continue' for the one written last.

    \b
    Example:
        ore session list
        ore session fork work work-b --at 2
        ore --resume-session work-b "try it another way"
    """


@session.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="One JSON array on stdout.")
def list_(as_json: bool) -> None:
    """List sessions, the one used last first: name, turns, model last used, last use, first
    prompt. An unreadable session is listed as such. A table at a terminal; in a pipe one
    tab-separated row per session, no header (the machine format); --json: a JSON array.

    \b
    Example:
        ore session list
        ore session list --json | jq -r '.[0].name'
    """
    from .listings import list_sessions

    with reported():
        list_sessions(as_json)


def _turn_range(value: str | None, total: int) -> tuple[int, int]:
    """`--turns A:B` (1-based, inclusive; either side may be left out) or `--turns N`."""
    if value is None:
        return 1, total
    first, sep, last = value.partition(":")
    try:
        a = int(first) if first.strip() else 1
        b = (int(last) if last.strip() else total) if sep else a
    except ValueError:
        raise click.BadParameter(
            "use A:B, A:, :B or N (turns count from 1)", param_hint="--turns"
        ) from None
    if not 1 <= a <= b <= total:
        has = f"turns 1 to {total}" if total else "no turns"
        raise click.BadParameter(
            f"{value} is not within this session's {has}", param_hint="--turns"
        )
    return a, b


@session.command()
@click.argument("name", callback=session_name)
@click.option("--json", "as_json", is_flag=True, help="The session's JSON (only those turns).")
@click.option("--turns", metavar="A:B", help="Only turns A to B (1-based; '3:' or ':2' too).")
def show(name: str, as_json: bool, turns: str | None) -> None:
    """Show a session's conversation: rendered at a terminal, plain Markdown in a pipe.

    \b
    Example:
        ore session show work
        ore session show work --turns 2:3
        ore session show work --json | jq '.messages | length'
    """
    from ..sessions import load, turn_count, turn_slice
    from .render import print_markdown, wanted

    with reported():
        saved = load(_store(), name)
    total = turn_count(saved.messages)
    if total == 0 and turns is None:
        shown, first = saved.messages, 1
    else:
        first, last = _turn_range(turns, total)
        shown = turn_slice(saved.messages, first, last)
    if as_json:
        data = saved.to_dict()
        data["messages"] = [m.to_dict() for m in shown]
        print_json(data)
        return
    from ..sessions import to_markdown

    text = to_markdown(f"Session {name}", shown, first_turn=first)
    if wanted():
        print_markdown(visible(text, keep="\n\t"))
    else:
        out(_for_stdout(text), nl=False)


def _for_stdout(text: str) -> str:
    """Session text for stdout: made visible at a terminal (line breaks and tabs kept), exactly
    as it is in a pipe."""
    return visible(text, keep="\n\t") if is_terminal(sys.stdout) else text


@session.command()
@click.argument("name", callback=session_name)
@click.argument("new", callback=session_name)
@click.option("--at", type=int, metavar="TURN", help="Keep the first TURN turns (default: all).")
def fork(name: str, new: str, at: int | None) -> None:
    """Save the first TURN turns of NAME as a new session NEW; NAME is left as it is.

    \b
    Example:
        ore session fork work work-b --at 2
        ore --resume-session work-b "what if we used SQLite?"
    """
    from .. import sessions

    with reported():
        try:
            forked = sessions.fork(_store(), name, new, at)
        except ValueError as exc:
            raise click.BadParameter(f"{at} is out of range: {exc}", param_hint="--at") from None
    count = sessions.turn_count(forked.messages)
    note(f"forked '{name}' to '{new}' ({count} turn{'' if count == 1 else 's'})")


@session.command(name="rm")
@click.argument("names", metavar="NAME...", nargs=-1, required=True, callback=session_name)
def rm(names: tuple[str, ...]) -> None:
    """Remove saved sessions. Every NAME is checked first: if one is missing or unreadable,
    nothing is removed.

    \b
    Example:
        ore session rm scratch old-idea
    """
    from ..sessions import remove

    with reported():
        removed = remove(_store(), names)
    for name in removed:
        note(f"removed '{name}'")


@session.command()
@click.argument("old", callback=session_name)
@click.argument("new", callback=session_name)
def rename(old: str, new: str) -> None:
    """Rename session OLD to NEW (NEW must not exist), in one atomic step.

    \b
    Example:
        ore session rename scratch release-notes
    """
    from ..sessions import rename as rename_session

    with reported():
        rename_session(_store(), old, new)
    note(f"renamed '{old}' to '{new}'")


@session.command()
@click.argument("name", callback=session_name)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json"]),
    default="md",
    show_default=True,
    help="md: Markdown for people (roles as headings, code kept fenced); json: the file as stored.",
)
def export(name: str, fmt: str) -> None:
    """Print a session for sharing: Markdown, or its JSON exactly as stored.

    \b
    Example:
        ore session export work > work.md
        ore session export work --format json > work.json
    """
    from ..sessions import load, stored_bytes, to_markdown

    store = _store()
    with reported():
        saved = load(store, name)  # checked whole: a corrupt session is reported, not exported
        if fmt == "json":
            stored = stored_bytes(store, name)
            if is_terminal(sys.stdout):
                text = stored.decode("utf-8", errors="replace").replace("\r\n", "\n")
                out(visible(text, keep="\n\t", as_json=True), nl=False)
            else:
                out(stored, nl=False)
        else:
            out(_for_stdout(to_markdown(f"Session {name}", saved.messages)), nl=False)
