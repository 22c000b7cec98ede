"""The REPL's slash commands: each changes what the next turn carries, or shows something; none
calls a model or sends anything. What they say goes to stderr (stdout carries only answers).

    /help            the commands
    /model [NAME]    the next turns use model NAME (without NAME: the model in use)
    /system [TEXT]   the next turns use TEXT as the system prompt (without TEXT: show it)
    /save NAME       save this conversation as session NAME and keep saving to it
    /fork NAME       copy this conversation to session NAME and go on there
    /history         show the turns so far
    /clear           start an empty conversation (a saved session keeps its turns)
    /exit            leave (also /quit, /bye, Ctrl-D)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from ..errors import OreError

if TYPE_CHECKING:
    from ..store import FileSessionStore
    from ..types import Session

__all__ = ["HELP", "Conversation", "run_command"]

HELP = """\
/help            these commands
/model [NAME]    the next turns use model NAME (without NAME: show the model in use)
/system [TEXT]   the next turns use TEXT as the system prompt (without TEXT: show it)
/save NAME       save this conversation as session NAME, and every next turn to it
/fork NAME       copy this conversation to a new session NAME and go on there
/history         show the turns so far
/clear           start an empty conversation (a saved session keeps its turns)
/exit            leave (also /quit, /bye or Ctrl-D)
A line starting with // sends a literal /. At a terminal, end a line with \\ to go on to the
next one, or put a prompt of many lines between two lines of \"\"\"."""


@dataclass(slots=True)
class Conversation:
    """What the next REPL turn carries. Slash commands change it; each turn extends `session`.

    :param session: the conversation so far; None for `-i`, where every turn is stateless.
    :param name: the saved session each turn is appended to, if any.
    :param history: send only the last N turns (`--history N`); None sends them all.
    :param model_chosen: the model was set by /model (a missing one then ends no REPL).
    """

    model: str
    system: str | None
    session: Session | None
    name: str | None = None
    history: int | None = None
    model_chosen: bool = False


def _say(text: str) -> None:
    click.echo(text, err=True)


def _conversation(conv: Conversation, command: str) -> Session:
    if conv.session is None:
        raise OreError(f"{command} needs a conversation, and -i keeps none: use -c")
    return conv.session


def _new_name(arg: str, command: str) -> str:
    from ..store import validate_name

    if not arg or len(arg.split()) != 1:
        raise OreError(f"{command} needs one session NAME, e.g. {command} work")
    return validate_name(arg)


def _help(conv: Conversation, arg: str, store: Callable[[], FileSessionStore]) -> None:
    _say(HELP)


def _model(conv: Conversation, arg: str, store: Callable[[], FileSessionStore]) -> None:
    if not arg:
        _say(f"model: {conv.model}")
        return
    conv.model, conv.model_chosen = arg, True
    _say(f"the next turns use model {arg}")


def _system(conv: Conversation, arg: str, store: Callable[[], FileSessionStore]) -> None:
    if not arg:
        _say(f"system prompt: {conv.system}" if conv.system else "no system prompt")
        return
    conv.system = arg
    _say("the next turns use this system prompt")


def _save(conv: Conversation, arg: str, store: Callable[[], FileSessionStore]) -> None:
    session = _conversation(conv, "/save")
    name = _new_name(arg, "/save")
    if conv.name is not None:
        raise OreError(
            f"this conversation is already saved as '{conv.name}'; /fork {name} goes on in a copy"
        )
    _created(store(), name, session, conv)
    conv.name = name
    _say(f"saved as '{name}'; the next turns are saved there too")


def _fork(conv: Conversation, arg: str, store: Callable[[], FileSessionStore]) -> None:
    from ..types import Session

    session = _conversation(conv, "/fork")
    name = _new_name(arg, "/fork")
    was = conv.name
    conv.session = _created(store(), name, Session(messages=session.messages), conv)
    conv.name = name
    kept = f"; '{was}' keeps what it had" if was else ""
    _say(f"forked to '{name}'; the next turns are saved there{kept}")


def _created(store: FileSessionStore, name: str, session: Session, conv: Conversation) -> Session:
    from ..sessions import record_model

    created = store.create(name, session)
    record_model(store, name, conv.model)
    return created


def _history(conv: Conversation, arg: str, store: Callable[[], FileSessionStore]) -> None:
    from ..sessions import to_markdown

    session = _conversation(conv, "/history")
    if not session.messages:
        _say("no turns yet")
        return
    title = f"Session {conv.name}" if conv.name else "This conversation"
    _say(to_markdown(title, session.messages).rstrip("\n"))


def _clear(conv: Conversation, arg: str, store: Callable[[], FileSessionStore]) -> None:
    from ..types import Session

    _conversation(conv, "/clear")
    was, conv.session, conv.name = conv.name, Session(), None
    kept = f"; '{was}' keeps its turns, and /save NAME saves this one" if was else ""
    _say(f"the conversation is empty{kept}")


_COMMANDS: dict[str, Callable[[Conversation, str, Callable[[], FileSessionStore]], None]] = {
    "/help": _help,
    "/model": _model,
    "/system": _system,
    "/save": _save,
    "/fork": _fork,
    "/history": _history,
    "/clear": _clear,
}


def run_command(line: str, conv: Conversation, store: Callable[[], FileSessionStore]) -> None:
    """Run the slash command `line` against `conv`. An unknown one is one line and nothing else.

    :raises OreError: when a command cannot do what it was asked (the REPL reports it).
    """
    command, _, arg = line.strip().partition(" ")
    handler = _COMMANDS.get(command.lower())
    if handler is None:
        _say(f"unknown command {command}: /help lists them (start a line with // to send a /)")
        return
    handler(conv, arg.strip(), store)
