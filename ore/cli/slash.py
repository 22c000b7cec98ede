"""The REPL's slash commands: each changes what the next turn carries, or shows something; none
calls a model or sends anything. What they say goes to stderr (stdout carries only answers).

    /help                    the commands that work in this mode
    /show                    model, backend, options, system prompt and session in use
    /set option KEY=VALUE    a model option for the next turns (checked as -o is)
    /set system TEXT         the system prompt for the next turns
    /set think LEVEL|on|off  ask a thinking model to reason (low, medium, high) or not
    /set model NAME          the model for the next turns
    /model [NAME]            the next turns use model NAME (without NAME: the model in use)
    /system [TEXT]           the next turns use TEXT as the system prompt (without TEXT: show it)
    /save NAME               save this conversation as session NAME and keep saving to it (-c)
    /fork NAME               copy this conversation to session NAME and go on there (-c)
    /history                 show the turns so far (-c)
    /clear                   start an empty conversation (a saved session keeps its turns) (-c)
    /exit                    leave (also /quit, /bye, Ctrl-D)

`/help` lists only what works in the mode: with -i (every turn stateless) the four commands
that need a conversation are left out, and refuse if typed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import click

from ..errors import OptionError, OreError
from .console import visible
from .options import MODEL_OPTIONS, THINK_LEVELS, Options, parse_model_options

if TYPE_CHECKING:
    from ..turn import Conversation
    from ..turn_types import TurnOptions
    from ..types import Session

__all__ = ["COMMANDS", "Chat", "completions", "help_text", "run_command"]

#: Every slash command: its usage, what it does, and whether it needs a conversation (-c).
COMMANDS: dict[str, tuple[str, str, bool]] = {
    "/help": ("/help", "these commands", False),
    "/show": ("/show", "the model, backend, options, system prompt and session in use", False),
    "/set": (
        "/set WHAT VALUE",
        "option KEY=VALUE (as -o), system TEXT, think LEVEL|on|off, model NAME",
        False,
    ),
    "/model": ("/model [NAME]", "the next turns use model NAME (without NAME: show it)", False),
    "/system": ("/system [TEXT]", "the next turns use TEXT as the system prompt", False),
    "/save": ("/save NAME", "save this conversation as session NAME, and every next turn", True),
    "/fork": ("/fork NAME", "copy this conversation to a new session NAME and go on there", True),
    "/history": ("/history", "show the turns so far", True),
    "/clear": ("/clear", "start an empty conversation (a saved session keeps its turns)", True),
    "/exit": ("/exit", "leave (also /quit, /bye or Ctrl-D)", False),
}
_SET_WHAT = ("option", "system", "think", "model")
_TAIL = """\
A line starting with // sends a literal /. At a terminal, end a line with \\ to go on to the
next one, or put a prompt of many lines between two lines of \"\"\"; Tab completes commands
and session names."""


def help_text(conversational: bool) -> str:
    """`/help`: only the commands that work in this mode (-c: all; -i: none that need a
    conversation)."""
    rows = [
        f"{usage:<17}{what}"
        for usage, what, needs in COMMANDS.values()
        if conversational or not needs
    ]
    return "\n".join([*rows, _TAIL])


@dataclass(slots=True)
class Chat:
    """What the next REPL turn carries. Slash commands change it; each turn extends the
    conversation.

    :param conversation: the conversation so far, and the saved session it goes to (if any);
        None for `-i`, where every turn is stateless.
    :param model_chosen: the model was set by /model (a missing one then ends no REPL).
    :param controls: the turn controls (options, think, keep-alive) every turn sends.
    :param flags: the invocation's flags the controls were built from; `/set` changes them.
    :param rebuild: builds the controls from flags, with every check the command line makes.
    :param backend: the kind of server turns go to, for `/show`.
    :param failed: a turn failed since the conversation was last saved (`ore.cli.conversation`
        decides the exit code from it).
    """

    model: str
    system: str | None
    conversation: Conversation | None = None
    model_chosen: bool = False
    controls: TurnOptions | None = None
    flags: Options | None = None
    rebuild: Callable[[Options], TurnOptions] | None = field(default=None, repr=False)
    backend: str = "ollama"
    failed: bool = False

    @property
    def name(self) -> str | None:
        return self.conversation.name if self.conversation is not None else None

    @property
    def unsaved_turns(self) -> int:
        """Turns held in memory only: the whole conversation when it has no session."""
        if self.conversation is None or self.conversation.name is not None:
            return 0
        return sum(1 for m in self.conversation.session.messages if m.role == "user")


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
    _say(help_text(chat.conversation is not None))


def _show(chat: Chat, arg: str) -> None:
    controls = chat.controls.to_dict() if chat.controls is not None else {}
    controls.pop("images", None)
    options = controls.get("options", {})
    shown = [
        f"{k}={v if not isinstance(v, list) else ','.join(map(str, v))}" for k, v in options.items()
    ]
    if "think" in controls:
        shown.append(f"think={controls['think']}")
    if "keep_alive" in controls:
        shown.append(f"keep_alive={controls['keep_alive']}")
    if chat.conversation is None:
        where = "none (-i: every turn stateless)"
    elif chat.name is not None:
        where = chat.name
    else:
        where = f"not saved ({_turns(chat.unsaved_turns)} in memory; /save NAME keeps them)"
    system = "none" if not chat.system else " ".join(chat.system.split())
    _say(
        f"model: {chat.model}\nbackend: {chat.backend}\n"
        f"options: {', '.join(shown) or 'none (the server decides)'}\n"
        f"system: {system if len(system) <= 80 else system[:79] + '…'}\nsession: {where}"
    )


def _turns(n: int) -> str:
    return f"{n} turn" + ("" if n == 1 else "s")


def _set(chat: Chat, arg: str) -> None:
    what, _, value = arg.partition(" ")
    what, value = what.lower(), value.strip()
    if what not in _SET_WHAT or not value:
        raise OptionError(
            "/set needs WHAT VALUE: option KEY=VALUE, system TEXT, think "
            f"{'|'.join(THINK_LEVELS)}|on|off, or model NAME"
        )
    if what == "model":
        _model(chat, value)
    elif what == "system":
        _system(chat, value)
    elif what == "option":
        parsed = parse_model_options([value])  # OptionError (named as -o) when it is wrong
        key = next(iter(parsed))
        _controls(chat, lambda f: f._replace(option=(*_without(f.option, key), value)))
        _say(f"the next turns send {key}={value.partition('=')[2].strip()}")
    else:
        level = value.lower()
        if level not in (*THINK_LEVELS, "on", "off"):
            raise OptionError(
                f"/set think {value!r} is not a level: use {', '.join(THINK_LEVELS)}, on or off"
            )
        off = level == "off"
        _controls(chat, lambda f: f._replace(think=None if off else level, no_think=off))
        _say("the next turns ask the model not to reason" if off else f"thinking: {level}")


def _without(values: tuple[str, ...], key: str) -> tuple[str, ...]:
    return tuple(v for v in values if v.partition("=")[0].strip() != key)


def _controls(chat: Chat, change: Callable[[Options], Options]) -> None:
    """New controls from changed flags, through the checks the command line makes; nothing
    changes when they fail."""
    if chat.flags is None or chat.rebuild is None:
        raise OreError("/set cannot change the controls here")
    flags = change(chat.flags)
    chat.controls, chat.flags = chat.rebuild(flags), flags


def _model(chat: Chat, arg: str) -> None:
    if not arg:
        _say(f"model: {chat.model}")
        return
    from ..config import load_config

    # An alias is a model name here too, as with -m (the file the REPL started with, or none).
    ignore = chat.flags is not None and chat.flags.no_config
    model = load_config(ignore=ignore, on_unusable_home=lambda _: None).resolve_alias(arg) or arg
    chat.model, chat.model_chosen = model, True
    _say(f"the next turns use model {model}" + (f" (alias {arg})" if model != arg else ""))


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
    chat.failed = False
    _say(f"saved as '{name}'; the next turns are saved there too")


def _fork(chat: Chat, arg: str) -> None:
    from ..turn import save_conversation
    from ..types import Session

    current = _session(chat, "/fork")
    name = _new_name(arg, "/fork")
    copy = Session(messages=current.session.messages)
    chat.conversation = save_conversation(name, copy, chat.model, history=current.history)
    chat.failed = False
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
    "/show": _show,
    "/set": _set,
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


def completions(before: str, text: str, conversational: bool) -> list[str]:
    """What Tab offers for `text`, the word being typed after `before` on the line: slash
    commands at the start, session names after /save and /fork, what /set takes after it."""
    words = before.split()
    if not words:
        names = [c for c, (_, _, needs) in COMMANDS.items() if conversational or not needs]
        return [f"{c} " for c in names if c.startswith(text)] if text.startswith("/") else []
    command = words[0].lower()
    if command == "/set" and len(words) == 1:
        return [f"{w} " for w in _SET_WHAT if w.startswith(text)]
    if command == "/set" and len(words) == 2 and words[1] == "option":
        return [f"{k}=" for k in sorted(MODEL_OPTIONS) if k.startswith(text)]
    if command == "/set" and len(words) == 2 and words[1] == "think":
        return [f"{w} " for w in (*THINK_LEVELS, "on", "off") if w.startswith(text)]
    if command in ("/save", "/fork") and len(words) == 1 and conversational:
        return [f"{n} " for n in _session_names() if n.startswith(text)]
    return []


def _session_names() -> list[str]:
    from ..sessions import list_sessions, session_store

    try:
        return sorted(s.name for s in list_sessions(session_store()))
    except OreError:
        return []
