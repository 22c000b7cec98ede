"""`ore log [list|show|search|usage|rm|prune|export|on|off|status]`: the turn log as things a
person reads, finds and deletes. None of these calls a model; they load click, this module and
`ore.log` (sqlite3), nothing heavier (`rich` only for a table at a terminal).

Listings go through `ore.cli.tables.emit_table` (a table at a terminal, TSV in a pipe, JSON with
`--json`); what the log holds is outside text and passes `console.visible` before a terminal.
"""

from __future__ import annotations

import contextlib
import sys
import time
from typing import TYPE_CHECKING, Any

import click

from .console import is_terminal, json_text, note, out, print_json, reported, visible, warn

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..artifacts import ExecutionArtifact
    from ..log import LoggedTurn
    from ..turn import TurnResult
    from .options import Options

__all__ = ["LOG_RULE", "continued", "keep_turn", "log", "logging_enabled", "parse_ref"]

_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
#: `ore log show -1`: a negative number is a turn, not an option.
_REF_SETTINGS = {**_SETTINGS, "ignore_unknown_options": True}


def parse_ref(text: str, what: str = "ID") -> int:
    """A turn reference: an id (`12`), `-1` for the latest (`-2` the one before), `log:12`."""
    value = text.removeprefix("log:").strip()
    try:
        ref = int(value)
    except ValueError:
        ref = 0
    if ref == 0:
        raise click.BadParameter(
            f"{text!r} is not a turn: give its id (ore log list) or -1 for the latest",
            param_hint=what,
        )
    return ref


def _date(text: str | None, flag: str) -> float | None:
    if text is None:
        return None
    from ..log import parse_date

    try:
        return parse_date(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=flag) from None


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def _tokens(turn: LoggedTurn) -> str:
    if turn.tokens_in is None and turn.tokens_out is None:
        return ""
    return f"{turn.tokens_in or 0}/{turn.tokens_out or 0}"


_COLUMNS = ("ID", "TIME", "MODEL", "SESSION", "TOKENS", "PROMPT")


def _listing(turns: list[LoggedTurn], as_json: bool, empty: str) -> None:
    from .tables import emit_table

    rows = [(t.id, _when(t.time), t.model, t.session or "", _tokens(t), t.prompt) for t in turns]
    emit_table(_COLUMNS, rows, as_json=as_json, records=[t.to_dict() for t in turns], empty=empty)


_EMPTY = "the turn log is empty; every completed turn is kept there ('ore log status')"


@click.group(name="log", context_settings=_SETTINGS, invoke_without_command=True)
@click.pass_context
def log(ctx: click.Context) -> None:
    """The turn log ($ORE_HOME/log.db): every completed turn, its prompt, answer and artifact.

    With no subcommand: the last 20 turns (as 'ore log list').

    \b
    Examples:
        ore log                          # the last 20 turns
        ore log search nginx             # best match first
        ore log show -1                  # the latest turn
        ore log show -1 --artifact | ore --artifact-in - "critique it"
        ore --artifact-in log:12         # replay turn 12
        ore log usage                    # tokens and turns per model per day
        ore log off                      # stop logging (ore log on: start again)
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_)


@log.command(name="list")
@click.option("-n", "count", type=click.IntRange(min=1), default=20, show_default=True)
@click.option(
    "--model", metavar="NAME", help="Only turns that asked this model (NAME: any of its tags)."
)
@click.option("--since", metavar="DATE", help="Only turns since DATE (2026-11-24, 3d, 12h).")
@click.option("--session", metavar="NAME", help="Only turns saved in this session.")
@click.option("--json", "as_json", is_flag=True, help="One JSON array on stdout.")
def list_(
    count: int = 20,
    model: str | None = None,
    since: str | None = None,
    session: str | None = None,
    as_json: bool = False,
) -> None:
    """The last N logged turns, newest first: id, time, model, session, tokens in/out, prompt.

    \b
    Example:
        ore log list -n 5 --model llama3.2 --since 1d
    """
    from ..log import list_turns

    after = _date(since, "--since")
    with reported():
        turns = list_turns(count, model=model, since=after, session=session)
    _listing(
        turns,
        as_json,
        _EMPTY if (model, since, session) == (None, None, None) else "no logged turn matches",
    )


@log.command(context_settings=_REF_SETTINGS)
@click.argument("ref", metavar="ID|-1")
@click.option("--json", "as_json", is_flag=True, help="The turn's columns and artifact as JSON.")
@click.option(
    "--artifact", is_flag=True, help="The turn's artifact (ore.exec.v3), to replay or chain."
)
def show(ref: str, as_json: bool, artifact: bool) -> None:
    """One logged turn: when, model, tokens, the prompt and the answer.

    \b
    Example:
        ore log show -1
        ore log show 12 --json | jq .artifact.output.content
        ore log show -1 --artifact | ore --artifact-in - "critique it"
    """
    import json

    from ..log import LogError, find

    if as_json and artifact:
        raise click.UsageError("--json and --artifact cannot be used together.")
    number = parse_ref(ref)
    with reported():
        turn, document = find(number)
        if artifact:
            from ..artifacts import V3, dumps_artifact, parse_artifact

            parsed = parse_artifact(document.encode("utf-8"), source=f"log:{turn.id}")
            out(json_text(dumps_artifact(parsed, V3)), nl=False)
            return
        try:
            data = json.loads(document)
        except ValueError:
            raise LogError(f"turn {turn.id}'s artifact in the log is not JSON") from None
    if as_json:
        print_json({**turn.to_dict(), "artifact": data})
        return
    answer, prompt = _field(data, "output", "content"), _field(data, "input", "prompt")
    head = f"turn {turn.id}, {_when(turn.time)}, model {turn.model}"
    if turn.backend:
        head += f" ({turn.backend})"
    if turn.session:
        head += f", session {turn.session}"
    facts = []
    if turn.tokens_in is not None or turn.tokens_out is not None:
        facts.append(f"{turn.tokens_in or 0} tokens in, {turn.tokens_out or 0} out")
    if turn.duration is not None:
        facts.append(f"{turn.duration:.2f} s")
    if turn.finish_reason:
        facts.append(f"finished: {turn.finish_reason}")
    if turn.relation != "root":
        facts.append(f"a {turn.relation} of an artifact")
    text = f"{head}\n{'; '.join(facts)}\n\n## Prompt\n\n{prompt}\n\n## Answer\n\n{answer}"
    out(visible(text, keep="\n\t") if is_terminal(sys.stdout) else text)


def _field(data: object, part: str, name: str) -> str:
    """`data[part][name]` when it is text (the document is read from an untrusted file)."""
    inner = data.get(part) if isinstance(data, dict) else None
    value = inner.get(name) if isinstance(inner, dict) else None
    return value if isinstance(value, str) else ""


@log.command()
@click.argument("text")
@click.option("-n", "count", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON array on stdout.")
def search(text: str, count: int, as_json: bool) -> None:
    """Turns whose prompt or answer holds every word of TEXT: best match first, newest first
    among equals.

    \b
    Example:
        ore log search "nginx 502"
    """
    from ..log import search as find_text

    with reported():
        turns = find_text(text, count)
    _listing(turns, as_json, f"no logged turn holds {text!r}")


@log.command()
@click.option("--since", metavar="DATE", help="Only days since DATE (2026-11-01, 7d).")
@click.option("--json", "as_json", is_flag=True, help="One JSON array on stdout.")
def usage(since: str | None, as_json: bool) -> None:
    """Turns and tokens per model per day (local time), the newest day first.

    \b
    Example:
        ore log usage --since 30d
    """
    from ..log import usage as per_day
    from .tables import emit_table

    after = _date(since, "--since")
    with reported():
        days = per_day(since=after)
    rows = [(u.day, u.model, u.turns, u.tokens_in, u.tokens_out) for u in days]
    emit_table(
        ("DAY", "MODEL", "TURNS", "TOKENS_IN", "TOKENS_OUT"),
        rows,
        as_json=as_json,
        records=[u.to_dict() for u in days],
        empty=_EMPTY,
    )


@log.command(context_settings=_REF_SETTINGS)
@click.argument("refs", nargs=-1, required=True, metavar="ID...")
def rm(refs: tuple[str, ...]) -> None:
    """Delete logged turns for good (their text is overwritten in the file, not just unlinked).

    \b
    Example:
        ore log rm 12 13
        ore log rm -1
    """
    from ..log import remove

    numbers = [parse_ref(r) for r in refs]
    with reported():
        gone = remove(numbers)
    note(f"deleted turn{'s' if len(gone) > 1 else ''} {', '.join(map(str, gone))} from the log")


@log.command()
@click.option("--before", metavar="DATE", required=True, help="2026-11-01, or an age: 30d.")
def prune(before: str) -> None:
    """Delete every turn logged before DATE for good, and rewrite the file (VACUUM).

    \b
    Example:
        ore log prune --before 90d
    """
    from ..log import prune as delete_before

    moment = _date(before, "--before")
    assert moment is not None
    with reported():
        count = delete_before(moment)
    note(f"deleted {count} turn{'' if count == 1 else 's'} logged before {_when(moment)}")


@log.command()
def export() -> None:
    """Every logged turn's artifact, oldest first, as JSON Lines on stdout.

    \b
    Example:
        ore log export > turns.jsonl
        ore log export | jq -r .input.prompt
    """
    from ..artifacts import parse_artifact
    from ..errors import OreError
    from ..log import export_rows

    # A row edited into something that is not an artifact is refused by `log show --artifact`
    # and `log:ID`; here it is the same: one line each, skipped, and exit 1 at the end.
    skipped = []
    with reported():
        for number, document in export_rows():
            try:
                parse_artifact(document.encode("utf-8"), source=f"log:{number}")
            except OreError as exc:
                warn(f"turn {number} is not exported: {exc.message}")
                skipped.append(number)
                continue
            out(json_text(document))
    if skipped:
        from ..log import LogError

        ids = " ".join(map(str, skipped))
        with reported():
            raise LogError(
                f"{len(skipped)} logged turn(s) not exported, not an artifact: {ids}; "
                f"the rest are on stdout; 'ore log rm {ids}' removes them"
            )


@log.command(name="on")
def on() -> None:
    """Keep every completed turn in the log (the default)."""
    _switch(True)


@log.command(name="off")
def off() -> None:
    """Stop logging turns ('log = false' in the config file); what is logged stays."""
    _switch(False)


def _switch(value: bool) -> None:
    from ..config_edit import set_config_value

    with reported():
        set_config_value("log", "true" if value else "false")
    note(
        "the turn log is on: every completed turn is kept"
        if value
        else "the turn log is off: turns are not kept (what was logged stays; 'ore log on')"
    )


@log.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object on stdout.")
def status(as_json: bool) -> None:
    """Whether turns are logged (and the rule that decides it), where, how many and how large
    the file is."""
    from ..log import log_path
    from ..log import usage as per_day

    with reported():
        enabled = logging_enabled()
        path = log_path()
        days = per_day()
    turns = sum(u.turns for u in days)
    size = _size(path)
    data: dict[str, Any] = {"log": enabled, "path": str(path), "turns": turns, "bytes": size}
    data["rule"] = LOG_RULE
    if as_json:
        print_json(data)
        return
    state = "on" if enabled else "off ('ore log on' starts it again)"
    for line in (f"log {state}", f"path {path}", f"turns {turns}", f"bytes {size}"):
        out(visible(line))
    out(f"rule {LOG_RULE}")


def _size(path: Any) -> int:
    import os

    total = 0
    for suffix in ("", "-wal"):
        with contextlib.suppress(OSError):
            total += os.lstat(f"{path}{suffix}").st_size
    return total


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
        # An unusable home was told once already (the turn's own config read); the log's own
        # write then fails with its line.
        return bool(load_config(on_unusable_home=lambda _: None).log)
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


def keep_turn(result: TurnResult) -> None:
    """Record a completed turn in the log, after `run_turn` returned: the turn is never changed
    by it, and a log that cannot be written is one warning line (the answer and the exit code
    stay as they are)."""
    if result.artifact is None:
        return
    from ..log import LogError, record

    # The log names a session only when the turn is saved there (a session that could not be
    # written holds the turn in memory only, `saved` short of it).
    kept = result.conversation
    saved = kept is not None and kept.saved == len(kept.session.messages)
    name = kept.name if kept is not None and saved else None
    artifact, seconds = result.artifact, result.seconds
    failed = _waited_out(lambda: record(artifact, session=name, seconds=seconds))
    if isinstance(failed, LogError):
        warn(f"this turn is not logged: {failed.message}")
    elif failed is not None:  # logging must never cost the user the answer
        warn(f"this turn is not logged: {type(failed).__name__}: {failed}")


def _waited_out(write: Callable[[], object]) -> Exception | None:
    """Run `write` in a thread of its own and wait for it here, where a signal is heard: the
    log's busy wait (up to 10 s behind another writer) is in SQLite's C code, which defers
    Python's handlers, so SIGTERM, SIGHUP or Ctrl-C in it ended ORE only when it was over.
    Waited for in full otherwise (`--continue` finds the turn); a process ended meanwhile
    leaves the log as a killed writer does (the transaction never committed)."""
    import threading

    failed: list[Exception] = []

    def run() -> None:
        try:
            write()
        except Exception as exc:
            failed.append(exc)

    worker = threading.Thread(target=run, name="ore-log-write", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.05)
    return failed[0] if failed else None


def continued(o: Options) -> Options:
    """`--continue`: go on from the most recent logged turn. A turn of a saved session resumes
    that session; a one-shot becomes a new session `log-ID` (its prompt and answer, written when
    the next turn completes). With the log off or empty: the session written last, as before.
    At a terminal, one stderr line names the session used."""
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
    # A session is followed only while it holds the logged turn (its answer, by content and
    # time): a name renamed away, removed, or taken by another conversation is not followed.
    held = _holds(turn.session, parent) if turn.session is not None else None
    if held:
        told(f"--continue: going on in session '{turn.session}' (logged turn {turn.id})")
        return o._replace(resume_session=turn.session)
    # Another session holding the turn: its session renamed, or the `log-ID` an earlier
    # --continue made from it when that turn's own log write failed.
    holder = _holder(parent, turn.time)
    if holder is not None:
        said = "" if turn.session is None else f"; '{turn.session}' was renamed or replaced"
        told(f"--continue: going on in session '{holder}', which holds logged turn {turn.id}{said}")
        return o._replace(resume_session=holder)
    name = f"log-{turn.id}"
    why = ""
    if held is not None:
        why = (
            f"session '{turn.session}' no longer holds it (renamed or replaced), so "
            if _saved(turn.session or "")
            else f"session '{turn.session}' is gone, so "
        )
    told(f"--continue: {why}going on from logged turn {turn.id} in a new session '{name}'")
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
