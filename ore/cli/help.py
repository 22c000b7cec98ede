"""`ore --help` in sections, wrapped to the terminal's width, and `ore help [TOPIC]`.

The flags stay where they are declared (`ore.cli.command`); this module only says which section
each belongs to, by its long name. A flag it does not name is shown under "Other options", so a
new flag is never hidden, only unsorted until it is given a section here.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

__all__ = ["CONTEXT_SETTINGS", "SECTIONS", "SectionedCommand", "help_args"]

#: The widest help ORE lays out: wide terminals get long lines, not endless ones.
_MAX_WIDTH = 160

#: Every command's context: -h as well as --help, and help as wide as the terminal (click
#: takes the smaller of this and the terminal's width; a pipe gets COLUMNS, else 80).
CONTEXT_SETTINGS: dict[str, object] = {
    "help_option_names": ["-h", "--help"],
    "max_content_width": _MAX_WIDTH,
}

#: The sections of `ore --help`, in order, and the long flags in each.
SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Input", ("--no-stdin", "--attach", "--file", "--max-input")),
    (
        "Model and options",
        (
            "--model",
            "--system",
            "--backend",
            "--base-url",
            "--option",
            "--keep-alive",
            "--think",
            "--no-think",
            "--timeout",
            "--max-time",
            "--max-size",
            "--list-models",
            "--no-config",
            "--no-config",
        ),
    ),
    (
        "Output",
        (
            "--stream",
            "--verbose",
            "--json",
            "--raw",
            "--dry-run",
            "--usage",
            "--extract",
            "--extract-last",
            "--hide-thinking",
            "--schema",
            "--schema-show",
        ),
    ),
    (
        "Sessions",
        (
            "--interactive",
            "--conversational",
            "--save-session",
            "--resume-session",
            "--continue",
            "--history",
            "--list-sessions",
        ),
    ),
    (
        "Tools and skills",
        (
            "--tool",
            "--tool-arg",
            "--grant",
            "--list-tools",
            "--route",
            "--route-threshold",
            "--skill",
            "--skill-resource",
            "--list-skills",
        ),
    ),
    ("Artifacts", ("--artifact-out", "--artifact-in", "--artifact-version", "--no-log")),
)
_OTHER = "Other options"
_SECTION_OF = {flag: title for title, flags in SECTIONS for flag in flags}


def _section(param: click.Parameter) -> str:
    for name in (*param.opts, *param.secondary_opts):
        if name in _SECTION_OF:
            return _SECTION_OF[name]
    return _OTHER


class SectionedCommand(click.Command):
    """A click command whose options are listed in `SECTIONS`, wrapped to the terminal."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        grouped: dict[str, list[tuple[str, str]]] = {title: [] for title, _ in SECTIONS}
        grouped[_OTHER] = []
        for param in self.get_params(ctx):
            if not isinstance(param, click.Option):
                continue  # PROMPT is in the usage line and the text above
            record = param.get_help_record(ctx)
            if record is not None:
                grouped[_section(param)].append(record)
        for title, rows in grouped.items():
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows, col_max=34)


def help_args(topic: Sequence[str], subcommands: Sequence[str]) -> list[str]:
    """`ore help [TOPIC...]` as the arguments that show that help (`ore TOPIC... --help`).

    :raises click.UsageError: (exit 2) for a topic that is not a subcommand.
    """
    if topic and topic[0] not in subcommands:
        raise click.UsageError(
            f"no help on {topic[0]!r}: use ore help, or ore help followed by one of "
            + ", ".join(subcommands)
        )
    return [*topic, "--help"]
