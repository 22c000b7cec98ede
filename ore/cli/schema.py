"""`ore schema ...`: print the JSON Schemas of ORE's data formats."""

from __future__ import annotations

import click

from ..artifacts import ARTIFACT_VERSION, SUPPORTED_VERSIONS, schema_text
from .console import out, reported
from .help import CONTEXT_SETTINGS

__all__ = ["schema"]


@click.group(name="schema", context_settings=CONTEXT_SETTINGS)
def schema() -> None:
    """Print the JSON Schemas of ORE's data formats, to validate them without ORE."""


@schema.command(name="artifact")
@click.option(
    "--version",
    "version",
    type=click.Choice(["v1", "v2", "v3", *SUPPORTED_VERSIONS]),
    default=ARTIFACT_VERSION,
    show_default=True,
    help="Which artifact version (v3 is what ORE writes; v2 ORE 0.10's; v1 upstream's).",
)
def artifact(version: str) -> None:
    """Print the JSON Schema (draft 2020-12) of an execution artifact.

    \b
    Example:
      ore schema artifact > ore.exec.v3.schema.json
      ore schema artifact --version v1
    """
    with reported():
        out(schema_text(version), nl=False)
