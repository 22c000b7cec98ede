"""The `ore` command: a thin click layer. It parses flags, checks their combinations and hands
the invocation to a mode (`ore.cli.turns`) or a listing (`ore.cli.listings`); `ore graph ...`,
`ore session ...`, `ore schema ...` and `ore skill ...` go to their own commands.

Only click and the small `options`/`console` modules load at start-up, so `ore --help` and
`ore --version` stay fast; everything else is imported when a command needs it.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # not `signal`: building its enums costs 0.8 ms of every start
import contextlib
import errno
import importlib
import sys
from typing import Any, NoReturn

import click

from .._version import __version__
from .console import (
    EXIT_INTERRUPTED,
    OutputLost,
    is_terminal,
    lost_exit,
    output_lost,
    reported,
    usage_error,
)
from .help import CONTEXT_SETTINGS, SectionedCommand, help_args
from .options import Options, check_conflicts, check_values, optional_values, session_name

__all__ = ["Options", "cli", "main", "program"]


@click.command(
    cls=SectionedCommand,
    context_settings=CONTEXT_SETTINGS,
    epilog="Subcommands: 'ore session --help' (list, show, fork, rm, rename, export saved "
    "sessions), 'ore graph --help' (codebase graph queries), 'ore mcp --help' (the same queries "
    "served to MCP clients), 'ore schema artifact' (the artifact "
    "JSON Schema), 'ore skill validate PATH' (check a skill against the Agent Skills spec), "
    "'ore log --help' (every turn kept: list, show, search, usage, rm, prune, on, off), "
    "'ore config --help' (your defaults: show, set, edit, path), 'ore models --help' (the "
    "default model and aliases). "
    "Exit codes: 0 ok, 1 error, 2 usage.",
)
@click.argument("prompt", required=False)
@click.option(
    "--no-stdin",
    is_flag=True,
    help="Never read stdin: the prompt argument alone is the prompt (for loops, ssh, cron).",
)
@click.option(
    "--model",
    "-m",
    metavar="NAME",
    help="Model to use (default: ORE_MODEL, else the server's best).",
)
@click.option(
    "--system", metavar="TEXT", help="System prompt for this invocation, replacing the persona."
)
@click.option("--list-models", is_flag=True, help="List the server's models and exit.")
@click.option(
    "--no-config", is_flag=True, help="Ignore the config file ($ORE_HOME/config.toml) this once."
)
@click.option(
    "--file",
    "-f",
    multiple=True,
    metavar="PATH|-",
    help="Send a text file as context, named, with its size ('-': stdin; repeatable).",
)
@click.option("--interactive", "-i", is_flag=True, help="REPL; every turn stateless.")
@click.option("--conversational", "-c", is_flag=True, help="REPL with one shared session.")
@click.option(
    "--save-session",
    metavar="NAME",
    callback=session_name,
    help="Save every turn to session NAME.",
)
@click.option(
    "--resume-session",
    metavar="NAME",
    callback=session_name,
    help="Continue session NAME, saving every turn.",
)
@click.option(
    "--continue",
    "-C",
    "continue_session",
    is_flag=True,
    help="Go on from the latest logged turn, with its model: its session, or a new one made "
    "from it (log off: the session written last).",
)
@click.option("--no-log", is_flag=True, help="Keep this turn out of the turn log (ore log).")
@click.option(
    "--history",
    type=click.IntRange(min=0),
    metavar="N",
    help="Send only the last N turns of the session (the session keeps them all).",
)
@click.option("--list-sessions", is_flag=True, help="List saved sessions and exit.")
@click.option(
    "--stream/--no-stream",
    "-s",
    default=None,
    help="Print the answer as it arrives (default: only when stdout is a terminal).",
)
@click.option("--verbose", "-v", is_flag=True, help="Metadata (token counts, durations) on stderr.")
@click.option("--json", "-j", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option(
    "--raw", is_flag=True, help="Print the answer exactly as sent, never rendered as Markdown."
)
@click.option(
    "--dry-run", is_flag=True, help="Print the exact messages that would be sent; call nothing."
)
@click.option(
    "--timeout",
    type=float,
    envvar="ORE_TIMEOUT",
    metavar="SECONDS",
    help="Wait at most this long for each piece of an answer (default 300).",
)
@click.option(
    "--max-time",
    type=float,
    envvar="ORE_MAX_TIME",
    metavar="SECONDS",
    help="Give up on a reply that takes longer than this in all (default 1800).",
)
@click.option(
    "--max-size",
    envvar="ORE_MAX_SIZE",
    metavar="SIZE",
    help="Give up on a reply larger than SIZE bytes (K, M, G suffixes; default 64M).",
)
@click.option(
    "--max-input",
    envvar="ORE_MAX_INPUT",
    metavar="SIZE",
    help="Refuse a prompt piped on stdin larger than SIZE bytes (K, M, G suffixes; default 16M).",
)
@click.option(
    "--backend",
    # ore.backends.select.BACKENDS, spelled out here so that `ore --help` imports no backend.
    type=click.Choice(["ollama", "openai", "deepseek"], case_sensitive=False),
    help="Model server: Ollama (default), OpenAI-compatible (llama-server, vLLM, ...), or "
    "deepseek (the OpenAI-compatible api.deepseek.com, key DEEPSEEK_API_KEY).",
)
@click.option(
    "--base-url",
    metavar="URL",
    help="Server address (openai default: ORE_BASE_URL, OPENAI_BASE_URL, http://127.0.0.1:8080/v1).",
)
@click.option("--tool", metavar="NAME", help="Run tool NAME before the turn.")
@click.option(
    "--tool-arg", multiple=True, metavar="KEY=VALUE", help="Argument for --tool (repeatable)."
)
@click.option(
    "--grant", multiple=True, metavar="PERM", help="Grant a permission to tools (repeatable)."
)
@click.option("--list-tools", is_flag=True, help="List tools and the permissions they need.")
@click.option("--route", is_flag=True, help="Pick a tool or skill from the prompt by rules.")
@click.option(
    "--route-threshold",
    type=float,
    default=0.5,
    show_default=True,
    metavar="FLOAT",
    help="Minimum confidence (0-1) for --route to pick a target.",
)
@click.option("--skill", metavar="NAME", help="Activate skill NAME for the turn.")
@click.option(
    "--skill-resource",
    multiple=True,
    metavar="NAME",
    help="Add a file from the skill's references/, assets/ or resources/ (repeatable).",
)
@click.option("--list-skills", is_flag=True, help="List skills and exit.")
@click.option(
    "--artifact-out",
    is_flag=False,
    flag_value="-",
    metavar="[PATH]",
    help="Write an execution artifact to PATH (bare or '-': stdout).",
)
@click.option(
    "--artifact-in", metavar="PATH", help="Replay an artifact, or chain from it with a prompt."
)
@click.option(
    "--artifact-version",
    type=click.Choice(["v1", "v2", "v3", "ore.exec.v1", "ore.exec.v2", "ore.exec.v3"]),
    default="v3",
    envvar="ORE_ARTIFACT_VERSION",
    show_default=True,
    help="What --artifact-out writes: v3 (exact replay, with the turn's controls), v2 (ORE "
    "0.10's) or v1 (upstream's fields only).",
)
@click.option(
    "--option",
    "-o",
    "option",
    multiple=True,
    metavar="KEY=VALUE",
    help="A model option for the turn, e.g. -o temperature=0.2 -o num_predict=200 (repeatable).",
)
@click.option(
    "--keep-alive",
    metavar="DURATION",
    help="How long Ollama keeps the model loaded after the answer (5m; 0 unloads; -1 keeps).",
)
@click.option(
    "--schema",
    metavar="SCHEMA",
    help="The answer is JSON following SCHEMA: a JSON Schema, a file, or fields 'name, age int'.",
)
@click.option("--schema-show", is_flag=True, help="Print the JSON Schema of --schema and exit.")
@click.option(
    "--think",
    is_flag=False,
    flag_value="on",
    metavar="[LEVEL]",
    help="Ask a thinking model to reason (LEVEL: low, medium or high).",
)
@click.option("--no-think", is_flag=True, help="Ask a thinking model not to reason.")
@click.option("--hide-thinking", is_flag=True, help="Never show the model's reasoning on stderr.")
@click.option(
    "--attach",
    "-a",
    multiple=True,
    metavar="PATH|-",
    help="Attach an image to the turn: PNG, JPEG, WebP or GIF ('-': stdin; repeatable).",
)
@click.option(
    "--usage", "-u", is_flag=True, help="After the answer, one line: tokens, seconds, tokens/s."
)
@click.option(
    "--extract", "-x", is_flag=True, help="Print only the answer's first fenced code block."
)
@click.option("--extract-last", is_flag=True, help="Print only the answer's last code block.")
@click.version_option(__version__, "--version", prog_name="ore", message="%(prog)s %(version)s")
def cli(**kwargs: Any) -> None:
    """Send PROMPT (and/or piped stdin) to a local model; print the answer.

    PROMPT '-' means: the prompt is stdin, and only stdin.

    \b
    Examples:
      ore "explain this error" < build.log
      git diff | ore --skill review-diff
      while read f; do ore --no-stdin "describe $f"; done < files.txt
      ore -c                       # conversation in a REPL
      ore --save-session work "first question"
      ore --continue "and then?"   # on from the latest logged turn
      ore --resume-session work --history 2 "q"   # send only its last 2 turns
    """
    o = Options(**{name: kwargs[name] for name in Options._fields if name in kwargs})
    check_conflicts(o)
    check_values(o)
    with reported():
        if o.continue_session:
            from .turn_logging import continued

            o = continued(o)
        if o.resume_session is not None:
            from .session import require_saved

            require_saved(o.resume_session)
        if o.list_sessions:
            from .listings import list_sessions

            list_sessions(o.as_json)
        elif o.list_tools:
            from .listings import list_tools

            list_tools(o.as_json)
        elif o.list_skills:
            from .listings import list_skills

            list_skills(o.as_json)
        elif o.list_models:
            from .listings import list_models
            from .request import configured

            list_models(configured(o))
        elif o.schema_show:
            from .controls import show_schema

            show_schema(o)
        elif o.repl:
            from .conversation import repl
            from .request import configured

            code = repl(configured(o))
            if code:
                raise click.exceptions.Exit(code)
        elif o.artifact_in is not None:
            from .turns import artifact_turn

            artifact_turn(o)  # configured once its artifact's backend is known
        elif o.prompt is None and (o.no_stdin or is_terminal(sys.stdin)):
            raise click.UsageError("give a prompt, pipe text on stdin, or use -i / -c for a REPL")
        else:
            from .request import configured
            from .turns import single_turn

            single_turn(configured(o))


def main(argv: list[str] | None = None) -> None:
    """The `ore` command: `ore graph|session|schema|skill ...` go to their subcommands.

    Exit codes: 0 ok, 1 error, 2 usage, 130 Ctrl-C, 143 SIGTERM and 129 SIGHUP (which end ORE
    as Ctrl-C does), 141 stdout's reader went away; stdout is flushed here, so a full or closed
    stdout is an error line, never a silent success.
    """
    args = sys.argv[1:] if argv is None else argv
    previous = _end_on_signals()
    try:
        code = _run(args)
    finally:  # a process that called main() gets its own handlers back
        for signum, handler in previous.items():
            _signal.signal(signum, handler)
    sys.exit(_flushed(code))


def program() -> NoReturn:
    """The `ore` executable (its console script and `python -m ore`): `main()`, then the way
    out `ore.cli.ending` gives a program (no interpreter teardown; a one-shot turn's log
    record written after the exit status). `main()` itself stays a plain library call."""
    from .ending import end, ending

    with ending() as left:
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    end(code, left)


def _run(args: list[str]) -> int:
    try:
        code = _dispatch(args)
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        code = EXIT_INTERRUPTED
    except Terminated as exc:
        with contextlib.suppress(OSError, ValueError):  # after SIGHUP the terminal may be gone
            sys.stderr.write("\n")
        code = 128 + exc.signum
    except OutputLost as exc:
        code = lost_exit(exc)
    except OSError as exc:
        if _ended_by is None and (sys.stdout is None or not _stdout_failed(exc)):
            raise
        code = 1 if _ended_by is not None else lost_exit(output_lost(exc))
    if _ended_by is not None:  # whatever the way out failed on (a hung-up terminal), say why
        code = 128 + _ended_by
    return code


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived. Raised where the program is, as Ctrl-C's KeyboardInterrupt
    is, so every `finally` and `with` on the way out runs (readline's terminal modes, the
    cursor a live view hid, temp files, locks, the graph's workers); a BaseException that is
    not a KeyboardInterrupt, so nothing that cancels only a reply or a line catches it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


#: The signals that end ORE as cleanly as Ctrl-C does (exit 128 + N).
_ENDING = (_signal.SIGTERM, _signal.SIGHUP)
_ended_by: int | None = None


def _end_on_signals() -> dict[int, Any]:
    """Install `_terminate` for SIGTERM and SIGHUP, unless they are ignored (`nohup`) or
    handled already; returns the handlers replaced."""
    global _ended_by
    _ended_by = None
    replaced = {}
    for signum in _ENDING:
        if _signal.getsignal(signum) == _signal.SIG_DFL:
            replaced[signum] = _signal.signal(signum, _terminate)
    return replaced


def _terminate(signum: int, _frame: object) -> None:
    global _ended_by
    _ended_by = signum
    for each in _ENDING:  # a second signal ends ORE at once, should the clean-up hang
        _signal.signal(each, _signal.SIG_DFL)
    raise Terminated(signum)


#: `ore NAME ...` runs the click group `NAME` of module `ore.cli.NAME`, imported only then.
SUBCOMMANDS = ("graph", "mcp", "session", "schema", "skill", "log", "config", "models")


def _dispatch(args: list[str]) -> int:
    command: click.Command = cli
    prog = "ore"
    args = optional_values(args)
    if args[:1] == ["help"]:  # `ore help [TOPIC]`: help, never a prompt
        try:
            args = help_args(args[1:], SUBCOMMANDS)
        except click.UsageError as exc:
            exc.ctx = cli.make_context("ore", ["--help"], resilient_parsing=True)
            return usage_error(exc)
    if args[:1] and args[0] in SUBCOMMANDS:
        name = args[0]
        module = importlib.import_module(f"{__package__}.{name}")
        command, args, prog = getattr(module, name), args[1:], f"ore {name}"
        for key, value in CONTEXT_SETTINGS.items():  # -h and the width, whoever wrote it
            command.context_settings.setdefault(key, value)
    try:
        code = command.main(args, prog_name=prog, standalone_mode=False)
    except click.ClickException as exc:  # every usage mistake, in one voice (exit 2)
        from .voice import in_one_voice

        if isinstance(exc, click.UsageError) and exc.ctx is None:
            # click's parser gives "-m requires an argument" no context: without one there is
            # no `Usage:` line, the shape every other usage mistake has
            exc.ctx = command.make_context(prog, [], resilient_parsing=True)
        in_one_voice(exc, args)
        return usage_error(exc)
    except click.exceptions.Abort:  # Ctrl-C or end of input outside a turn
        sys.stderr.write("\n")
        return EXIT_INTERRUPTED
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return code if isinstance(code, int) and not isinstance(code, bool) else 0


#: What writing to a full, closed or vanished stdout raises. ORE's own file I/O is wrapped in
#: its errors where it happens, so a bare OSError of these kinds that reaches `main` is stdout's.
_OUTPUT_ERRNOS = frozenset(
    {errno.EPIPE, errno.ENOSPC, errno.EBADF, errno.EIO, errno.EFBIG, errno.EDQUOT}
)


def _stdout_failed(exc: OSError) -> bool:
    """Whether `exc` (which reached the top) came from writing stdout."""
    return exc.errno in _OUTPUT_ERRNOS


def _flushed(code: int) -> int:
    """Flush stdout before exiting, so its failure is reported instead of ignored (after an
    error, that error's code stands)."""
    if sys.stdout is None:
        return code
    try:
        sys.stdout.flush()
    except (OSError, ValueError) as exc:
        lost = lost_exit(output_lost(exc))
        return lost if code == 0 else code
    return code
