"""The turn's side of the log: the rule that says whether a turn is logged (`LOG_RULE`,
`logging_enabled`), keeping a completed turn (`keep_turn`), `--continue` (`continued`: going on
from the latest logged turn) and reading a turn reference (`parse_ref`: `log:12`, `-1`).

Apart from `ore.cli.log` (the `ore log` commands) because every turn calls these and none of the
commands' code: a turn loads this module, never the listings, search, export or status.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import click

from .console import is_terminal, note, warn

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..artifacts import ExecutionArtifact
    from ..turn import TurnRequest, TurnResult
    from .options import Options

__all__ = ["LOG_RULE", "continued", "keep_turn", "logging_enabled", "parse_ref"]


def parse_ref(text: str, what: str = "ID") -> int:
    """A turn reference: an id (`12`), `-1` for the latest (`-2` the one before), `log:12`."""
    value = text.removeprefix("log:")
    # ASCII digits only: int() would take "+1", " 1" and "１" (full-width) for turn 1.
    digits = value.removeprefix("-")
    ref = int(value) if digits.isascii() and digits.isdigit() else 0
    if ref == 0:
        raise click.BadParameter(
            f"{text!r} is not a turn: give its id (ore log list) or -1 for the latest",
            param_hint=what,
        )
    return ref


#: When a turn is logged: one rule, said by `ore log status` and docs/log.md.
LOG_RULE = (
    "a turn is logged unless the config file says log = false (ore log off; it holds under "
    "--no-config too) or the call says --no-log"
)


def logging_enabled(no_log: bool = False, no_config: bool = False) -> bool:
    """Whether a turn is logged, as `LOG_RULE` says. `--no-config` sets aside the file's
    defaults for a turn, never the user's word that turns are not kept: the file's `log` is
    read all the same, and a file that cannot be read (it may say false) keeps the turn out
    of the log, with one warning line."""
    if no_log:
        return False
    from ..config import load_config, log_switch
    from ..errors import ConfigError, HomeUnusable

    if not no_config:
        # An unusable home was told once already, by the turn's own config read, in a line
        # that says the turn goes on without the log (`ore.cli.request.configured`): the log
        # there could not be written either, and a second line would say so again.
        unusable: list[str] = []
        config = load_config(on_unusable_home=unusable.append)
        return not unusable and bool(config.log)
    try:
        return log_switch() is not False
    except HomeUnusable:
        return True  # no file can be read there, nor a log written: its write says so
    except ConfigError as exc:
        warn(
            f"this turn is not logged: the config file {exc.path} cannot be read, and it may "
            "say log = false; fix it (ore config edit), or add --no-log"
        )
        return False


def keep_turn(result: TurnResult, request: TurnRequest, *, after_exit: bool = False) -> None:
    """Record a completed turn in the log, after `run_turn` returned: the turn is never changed
    by it, and a log that cannot be written is one warning line (the answer and the exit code
    stay as they are). The turn's artifact is `result.artifact`, else its document is made here
    from `request` (`ore.turn.document_of`). With `after_exit` (a one-shot turn, its answer out),
    the document is made and the record written once the process has given its exit status,
    by the child `ore.cli.ending` forks, when it can be (`ending.deferring()`: `ore` is the
    program, and nobody reads its stderr to the end). A log held locked by another process is
    waited for in slices between which a signal is heard (`ore.log.records.written`)."""
    # The log names a session only when the turn is saved there (a session that could not be
    # written holds the turn in memory only, `saved` short of it).
    kept = result.conversation
    saved = kept is not None and kept.saved == len(kept.session.messages)
    name = kept.name if kept is not None and saved else None

    def write() -> None:
        turn: ExecutionArtifact | dict[str, Any] | None = result.artifact
        if turn is None:  # its document only: no artifact class is defined for the log
            from ..turn import document_of

            turn = document_of(request, result)
        from ..log import record

        # A one-shot turn's process exits right after: its connection is left to the exit.
        from .ending import until_exit

        record(
            turn,
            session=name,
            seconds=result.seconds,
            until_exit=until_exit if after_exit else None,
        )

    if after_exit:
        from . import ending

        if ending.deferring():
            from ..log.writers import hold
            from ..paths import log_path

            held = hold(log_path())
            if held is not None:

                def later() -> None:
                    try:
                        _told(_attempt(write))
                    finally:
                        os.close(held)  # the record is in: readers may go on

                if ending.after_exit(later):
                    return
                os.close(held)
    _told(_attempt(write))


def _attempt(write: Callable[[], object]) -> Exception | None:
    try:
        write()
    except Exception as exc:
        return exc
    return None


def _told(failed: Exception | None) -> None:
    """The one warning line for a record that could not be written."""
    if failed is None:
        return
    from ..log import LogError

    if isinstance(failed, LogError):
        warn(f"this turn is not logged: {failed.message}")
    else:  # logging must never cost the user the answer
        warn(f"this turn is not logged: {type(failed).__name__}: {failed}")


def continued(o: Options) -> Options:
    """`--continue`: go on from the most recent logged turn, with its model unless --model is
    given. A turn of a saved session resumes that session; a one-shot becomes a new session
    `log-ID` (its prompt and answer, written when the next turn completes). With the log off
    or empty: the session written last, as before. At a terminal, one stderr line names the
    session and the model used."""
    from ..turn import latest_session

    def told(line: str) -> None:
        if is_terminal(sys.stderr):
            note(line)

    if not logging_enabled(o.no_log, o.no_config):
        name = latest_session()
        why = "--no-log leaves the turn log aside" if o.no_log else "the turn log is off"
        told(f"--continue: {why}, so going on in the session written last, '{name}'")
        return o._replace(resume_session=name)
    from ..log import latest, seed_session

    found = latest()
    if found is None:
        name = latest_session()
        told(
            f"--continue: the turn log is empty, so going on in the session written last, '{name}'"
        )
        return o._replace(resume_session=name)
    turn, document = found
    from ..artifacts import parse_artifact

    parent = parse_artifact(document.encode("utf-8"), source=f"log:{turn.id}")
    # The conversation goes on with the model it had (unless --model says otherwise), and on
    # the backend it had when no flag, variable or file names one: `ore.config.settle`.
    backend = parent.backend.name if parent.backend is not None else None
    o = o._replace(carried=(parent.model_id, backend))
    model = f", model {o.model or parent.model_id}"
    # A session is followed only while it holds the logged turn (its answer, by content and
    # time): a name renamed away, removed, or taken by another conversation is not followed.
    held = _holds(turn.session, parent) if turn.session is not None else None
    if held:
        told(f"--continue: going on in session '{turn.session}' (logged turn {turn.id}{model})")
        return o._replace(resume_session=turn.session)
    # Another session holding the turn: its session renamed, or the `log-ID` an earlier
    # --continue made from it when that turn's own log write failed.
    holder = _holder(parent, turn.time)
    if holder is not None:
        said = "" if turn.session is None else f"; '{turn.session}' was renamed or replaced"
        told(
            f"--continue: going on in session '{holder}', which holds logged turn {turn.id}"
            f"{said}{model}"
        )
        return o._replace(resume_session=holder)
    name = f"log-{turn.id}"
    why = ""
    if held is not None:
        why = (
            f"session '{turn.session}' no longer holds it (renamed or replaced), so "
            if _saved(turn.session or "")
            else f"session '{turn.session}' is gone, so "
        )
    told(f"--continue: {why}going on from logged turn {turn.id} in a new session '{name}'{model}")
    return o._replace(save_session=name, seed=seed_session(parent))


#: A session holding a logged turn was written at most this long before the turn's time.
_SAVED_BEFORE_LOGGED = 60.0


def _holder(parent: ExecutionArtifact, logged: float) -> str | None:
    """The saved session that holds logged turn `parent`, the one written last if several do
    (a fork copies it); only sessions written since the turn are read (a stat of each)."""
    from ..errors import OreError
    from ..sessions import session_store

    store = session_store()
    found = []
    try:
        listed = store.scan()
    except OreError:
        return None
    for name, _, st in listed:
        modified = store.modified(name, st)[0]
        if modified >= logged - _SAVED_BEFORE_LOGGED and _holds(name, parent, unreadable=False):
            found.append((modified, name))
    return max(found)[1] if found else None


def _holds(name: str, parent: ExecutionArtifact, *, unreadable: bool = True) -> bool:
    """Whether saved session `name` holds the logged turn `parent` (an answer of the same text
    and time); a session that cannot be read is taken to when `unreadable` (resuming it then
    says why)."""
    from ..errors import OreError
    from ..sessions import session_store

    store = session_store()
    if not store.exists(name):
        return False
    try:
        messages = store.load(name).messages
    except OreError:
        return unreadable
    answer = parent.output
    return any(
        m.role == "assistant"
        and m.content == answer.content
        and (m.timestamp is None or m.timestamp == answer.timestamp)  # older sessions: no time
        for m in reversed(messages)
    )


def _saved(name: str) -> bool:
    """Whether session `name` is still saved (a removed one is gone; the log still holds its
    turns, so `--continue` goes on from those rather than failing on the name)."""
    from ..sessions import session_store

    return session_store().exists(name)
