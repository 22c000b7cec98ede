"""The REPL mode (-i, -c, or a session flag without a prompt): turns read from the terminal or
a pipe, each one `ore.turn.run_turn` call. Slash commands (`ore.cli.slash`) change what the
next turn carries; none calls a model. Reading lines is `ore.cli.repl`'s.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

from .._version import __version__
from ..errors import ModelNotFound, OreError
from .console import is_terminal, note, report
from .options import Options
from .request import context_of, controls_of, input_limit, server_of, system_of

__all__ = ["repl"]


def repl(o: Options) -> int:
    """Run the REPL until its input ends or /exit; the exit code of the turn that ended it.

    A failed turn (the server down included) leaves the conversation as it was before it, in
    memory: at a terminal the REPL goes on, and when the conversation is not saved ORE says
    so and offers /save NAME. Leaving then exits 0, or 1 when a turn failed and the turns
    held in memory were not saved after it (they are gone: the exit code says so). In a
    pipe the first failure ends the REPL with its exit code, as before.
    """
    from ..paths import ore_home
    from ..turn import (
        Conversation,
        TurnNotKept,
        TurnRequest,
        backend_kind,
        choose_model,
        close,
        connect,
    )
    from ..types import Session
    from .repl import read_lines, run_repl
    from .slash import Chat, completions, run_command
    from .turns import conversation_of, run_and_show

    plan = context_of(o)
    server = server_of(o)
    controls = controls_of(o, server)
    backend = connect(server)
    conversation = conversation_of(o)
    if conversation is None and not o.interactive:
        conversation = Conversation(Session(), history=o.history)
    chat = Chat(
        choose_model(o.model, backend),
        system_of(o.system),
        conversation,
        controls=controls,
        flags=o,
        rebuild=lambda flags: controls_of(flags, server),
        backend=backend_kind(server),
    )

    def turn(line: str) -> None:
        request = TurnRequest.of(
            line,
            model=chat.model,
            system=chat.system,
            controls=chat.controls,
            context=plan,
            conversation=chat.conversation,
        )
        try:
            result = run_and_show(chat.flags or o, request, chat.controls or controls, backend)
        except ModelNotFound as exc:
            if chat.model_chosen:  # a /model typo need not end the REPL
                raise OreError(f"{exc.message}; or /model NAME") from None
            raise
        except TurnNotKept as exc:  # shown; kept in memory, and the next save tries it again
            if exc.result.conversation is not None:
                chat.conversation = exc.result.conversation
            raise
        if result.conversation is not None:
            chat.conversation = result.conversation

    interactive_terminal = is_terminal(sys.stdin)

    def failed(exc: OreError) -> None:
        chat.failed = True
        if interactive_terminal and chat.unsaved_turns:
            note(
                f"the conversation so far ({_turns(chat.unsaved_turns)}) is kept in memory, "
                "not on disk: /save NAME keeps it"
            )

    if interactive_terminal:
        mode = "interactive (each turn stateless)" if o.interactive else "conversational"
        name = conversation.name if conversation is not None else None
        where = f", session '{name}'" if name else ""
        note(
            f"ORE {__version__} {mode}, model {chat.model}{where}. "
            "/help for commands, /exit or Ctrl-D to leave."
        )
    lines = read_lines(
        "> ",
        history=ore_home() / "history",
        complete=lambda before, text: completions(before, text, conversation is not None),
        limit=input_limit(o),
    )
    if o.prompt:
        lines = _prepend(o.prompt, lines)
    try:
        code = run_repl(
            lines,
            turn,
            report=report,
            keep_going=interactive_terminal,
            command=lambda line: run_command(line, chat),
            failed=failed,
        )
    finally:
        close(backend)
    if code == 0 and chat.failed and chat.unsaved_turns:
        note(f"{_turns(chat.unsaved_turns)} not saved after a failed turn: exit 1")
        return 1
    return code


def _turns(n: int) -> str:
    return f"{n} turn" + ("" if n == 1 else "s")


def _prepend(first: str, rest: Iterator[str]) -> Iterator[str]:
    yield first
    yield from rest
