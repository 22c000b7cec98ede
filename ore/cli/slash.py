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
from .console import visible

if TYPE_CHECKING:
    from ..turn import Conversation
    from ..types import Session

__all__ = ["HELP", "Chat", "run_command"]

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
class Chat:
    """What the next REPL turn carries. Slash commands change it; each turn extends the
    conversation.

    :param conversation: the conversation so far, and the saved session it goes to (if any);
        None for `-i`, where every turn is stateless.
    :param model_chosen: the model was set by /model (a missing one then ends no REPL).
    """

    model: str
    system: str | None
    conversation: Conversation | None = None
    model_chosen: bool = False

    @property
    def name(self) -> str | None:
        return self.conversation.name if self.conversation is not None else None


def _say(text: str) -> None:
    """One message on stderr; what it quotes (a model name, a system prompt, the turns of
    /history) passes `console.visible`, line breaks and tabs kept."""
    click.echo(visible(text, keep="\n\t"), err=True)


def _session(chat: Chat, command: str) -> Conversation:
    if chat.conversation is None:
        raise OreError(f"{command} needs a conversation, and -i keeps none: use -c")
    return chat.conversation


def _new_name(arg: str, command: str) -> str:
    from ..turn import valid_name

    if not arg or len(arg.split()) != 1:
        raise OreError(f"{command} needs one session NAME, e.g. {command} work")
    return valid_name(arg)


def _help(chat: Chat, arg: str) -> None:
    _say(HELP)


def _model(chat: Chat, arg: str) -> None:
    if not arg:
        _say(f"model: {chat.model}")
        return
    chat.model, chat.model_chosen = arg, True
    _say(f"the next turns use model {arg}")


def _system(chat: Chat, arg: str) -> None:
    if not arg:
        _say(f"system prompt: {chat.system}" if chat.system else "no system prompt")
        return
    chat.system = arg
    _say("the next turns use this system prompt")


def _save(chat: Chat, arg: str) -> None:
    from ..turn import save_conversation

    current = _session(chat, "/save")
    name = _new_name(arg, "/save")
    if current.name is not None:
        raise OreError(
            f"this conversation is already saved as '{current.name}'; /fork {name} goes on in a "
            "copy"
        )
    chat.conversation = save_conversation(
        name, current.session, chat.model, history=current.history
    )
    _say(f"saved as '{name}'; the next turns are saved there too")


def _fork(chat: Chat, arg: str) -> None:
    from ..turn import save_conversation
    from ..types import Session

    current = _session(chat, "/fork")
    name = _new_name(arg, "/fork")
    copy = Session(messages=current.session.messages)
    chat.conversation = save_conversation(name, copy, chat.model, history=current.history)
    kept = f"; '{current.name}' keeps what it had" if current.name else ""
    _say(f"forked to '{name}'; the next turns are saved there{kept}")


def _history(chat: Chat, arg: str) -> None:
    from ..sessions import to_markdown

    session: Session = _session(chat, "/history").session
    if not session.messages:
        _say("no turns yet")
        return
    title = f"Session {chat.name}" if chat.name else "This conversation"
    _say(to_markdown(title, session.messages).rstrip("\n"))


def _clear(chat: Chat, arg: str) -> None:
    from ..turn import Conversation
    from ..types import Session

    current = _session(chat, "/clear")
    chat.conversation = Conversation(Session(), history=current.history)
    was = current.name
    kept = f"; '{was}' keeps its turns, and /save NAME saves this one" if was else ""
    _say(f"the conversation is empty{kept}")


_COMMANDS: dict[str, Callable[[Chat, str], None]] = {
    "/help": _help,
    "/model": _model,
    "/system": _system,
    "/save": _save,
    "/fork": _fork,
    "/history": _history,
    "/clear": _clear,
}


def run_command(line: str, chat: Chat) -> None:
    """Run the slash command `line` against `chat`. An unknown one is one line and nothing else.

    :raises OreError: when a command cannot do what it was asked (the REPL reports it).
    """
    command, _, arg = line.strip().partition(" ")
    handler = _COMMANDS.get(command.lower())
    if handler is None:
        _say(f"unknown command {command}: /help lists them (start a line with // to send a /)")
        return
    handler(chat, arg.strip())
