"""`ore log [list|show|search|usage|rm|prune|export|on|off|status]`: the turn log as things a
person reads, finds and deletes. None of these calls a model; they load click, this module and
`ore.log` (sqlite3), nothing heavier (`rich` only for a table at a terminal). What a turn
calls of the log (keeping it, `--continue`, the rule, `log:ID`) is `ore.cli.turn_logging`.

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
from .turn_logging import LOG_RULE, logging_enabled, parse_ref

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..log import LoggedTurn

__all__ = ["log"]

_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
#: `ore log show -1`: a negative number is a turn, not an option.
_REF_SETTINGS = {**_SETTINGS, "ignore_unknown_options": True}


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


#: A listing's parameters as the user typed them.
_FLAGS = {
    "count": "-n",
    "model": "--model",
    "since": "--since",
    "session": "--session",
    "as_json": "--json",
}


def _list_options(command: Callable[..., None]) -> Callable[..., None]:
    """The options of a listing, on `ore log list` and on `ore log` itself (`ore log -n 3`, as
    `llm logs -n 3`)."""
    for option in reversed(
        (
            click.option("-n", "count", type=click.IntRange(min=1), default=20, show_default=True),
            click.option(
                "--model",
                metavar="NAME",
                help="Only turns that asked this model (NAME: any of its tags).",
            ),
            click.option(
                "--since", metavar="DATE", help="Only turns since DATE (2026-11-24, 3d, 12h)."
            ),
            click.option("--session", metavar="NAME", help="Only turns saved in this session."),
            click.option("--json", "as_json", is_flag=True, help="One JSON array on stdout."),
        )
    ):
        command = option(command)
    return command


@click.group(name="log", context_settings=_SETTINGS, invoke_without_command=True)
@_list_options
@click.pass_context
def log(ctx: click.Context, /, **listing: Any) -> None:
    """The turn log ($ORE_HOME/log.db): every completed turn, its prompt, answer and artifact.

    With no subcommand: the last turns (as 'ore log list', with its options).

    \b
    Examples:
        ore log -n 3                     # the last 3 turns
        ore log search nginx             # best match first
        ore log show -1                  # the latest turn
        ore log show -1 --artifact | ore --artifact-in - "critique it"
        ore --artifact-in log:12         # replay turn 12
        ore log usage                    # tokens and turns per model per day
        ore log off                      # stop logging (ore log on: start again)
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_, **listing)
        return
    given = [
        name
        for name in listing
        if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT
    ]
    if given:
        flags = ", ".join(_FLAGS[name] for name in given)
        sub = ctx.invoked_subcommand
        raise click.UsageError(
            f"{flags} before '{sub}' belongs to the listing ('ore log -n 3'); give what "
            f"'{sub}' takes after it (ore log {sub} --help)"
        )


@log.command(name="list")
@_list_options
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

    from ..log import find

    if as_json and artifact:
        raise click.UsageError("--json and --artifact cannot be used together.")
    number = parse_ref(ref)
    with reported():
        from ..artifacts import V3, dumps_artifact, parse_artifact

        turn, document = find(number)
        # One rule for every reader: a row that is not an artifact (an edited file) is refused
        # here as by --artifact, log:ID and export, never a traceback (nested 200,000 deep).
        parsed = parse_artifact(document.encode("utf-8"), source=f"log:{turn.id}")
        if artifact:
            out(json_text(dumps_artifact(parsed, V3)), nl=False)
            return
        data = json.loads(document)  # parsed above: it is JSON of an artifact's depth
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
