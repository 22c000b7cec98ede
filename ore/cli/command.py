"""The `ore` command: a thin click layer. It parses flags, checks their combinations and hands
the invocation to a mode (`ore.cli.turns`) or a listing (`ore.cli.listings`); `ore graph ...`,
`ore schema ...` and `ore skill ...` go to their own commands.

Only click and the small `options`/`console` modules load at start-up, so `ore --help` and
`ore --version` stay fast; everything else is imported when a command needs it.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from .. import __version__
from .console import reported
from .options import Options, check_conflicts

__all__ = ["Options", "cli", "main"]


@click.command(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="Subcommands: 'ore graph --help' (codebase graph queries), "
    "'ore schema artifact' (the artifact JSON Schema), "
    "'ore skill validate PATH' (check a skill against the Agent Skills spec). "
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
@click.option("--interactive", "-i", is_flag=True, help="REPL; every turn stateless.")
@click.option("--conversational", "-c", is_flag=True, help="REPL with one shared session.")
@click.option("--save-session", metavar="NAME", help="Save every turn to session NAME.")
@click.option("--resume-session", metavar="NAME", help="Continue session NAME, saving every turn.")
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
    "--backend",
    # ore.backends.select.BACKENDS, spelled out here so that `ore --help` imports no backend.
    type=click.Choice(["ollama", "openai", "deepseek"], case_sensitive=False),
    envvar="ORE_BACKEND",
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
    type=click.Choice(["v1", "v2", "ore.exec.v1", "ore.exec.v2"]),
    default="v2",
    envvar="ORE_ARTIFACT_VERSION",
    show_default=True,
    help="What --artifact-out writes: v2 (exact replay, lineage) or v1 (upstream's fields only).",
)
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
    """
    o = Options(**{name: kwargs[name] for name in Options._fields})
    check_conflicts(o)
    from . import listings, turns

    with reported():
        if o.list_sessions:
            listings.list_sessions()
        elif o.list_tools:
            listings.list_tools()
        elif o.list_skills:
            listings.list_skills()
        elif o.list_models:
            listings.list_models(o)
        elif o.repl:
            code = turns.repl(o)
            if code:
                raise click.exceptions.Exit(code)
        elif o.artifact_in is not None:
            turns.artifact_turn(o)
        elif o.prompt is None and (o.no_stdin or sys.stdin is None or sys.stdin.isatty()):
            raise click.UsageError("give a prompt, pipe text on stdin, or use -i / -c for a REPL")
        else:
            turns.single_turn(o)


def main(argv: list[str] | None = None) -> None:
    """The `ore` command: `ore graph ...`, `ore schema ...` and `ore skill ...` go to their
    subcommands."""
    args = sys.argv[1:] if argv is None else argv
    try:
        if args[:1] == ["graph"]:
            from .graph import graph

            graph.main(args[1:], prog_name="ore graph")
        elif args[:1] == ["schema"]:
            from .schema import schema

            schema.main(args[1:], prog_name="ore schema")
        elif args[:1] == ["skill"]:
            from .skill import skill

            skill.main(args[1:], prog_name="ore skill")
        else:
            cli.main(args, prog_name="ore")
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        sys.exit(130)
    except BrokenPipeError:
        # The reader went away (`ore ... | head`): not an error of ours; silence the final flush.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(1)
