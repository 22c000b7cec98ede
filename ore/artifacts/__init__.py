"""Execution artifacts: one turn as a versioned, schema-validated JSON document.

An artifact records what one single turn asked and answered, so that another process can replay
it (send the recorded messages again, perhaps to another model) or chain from it (pass its answer
as turn-scoped context to a new prompt). Chaining happens through data only: ORE never calls ORE.

Versions (the `artifact_version` string; each has a frozen JSON Schema in `ore/schemas/`):

- `ore.exec.v1`: upstream ORE v0.9's format, read exactly as upstream writes it, and written on
  request (`version="ore.exec.v1"`) with exactly upstream's fields.
- `ore.exec.v2`: a superset of v1 (every v1 field keeps its name, type and meaning) that adds
  `input.messages` (exactly what was sent), `ore_version`, `backend` and `lineage`. The default.

`jsonschema` is imported only when an artifact is read or written, and `click` only for
`ore schema`: a plain turn pays for neither. See docs/artifacts.md for the format and bump rules.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from ._contract import (
    BackendInfo,
    Continuation,
    ExecutionArtifact,
    Relation,
    build_artifact,
    public_url,
    validate,
)
from ._io import (
    MAX_ARTIFACT_BYTES,
    check_destination,
    dumps_artifact,
    parse_artifact,
    read_artifact,
    write_artifact,
)
from ._replay import ArtifactTurn, artifact_context, plan_turn
from ._schema import (
    ARTIFACT_VERSION,
    SUPPORTED_VERSIONS,
    V1,
    V2,
    load_schema,
    resolve_version,
    schema_text,
)

__all__ = [
    "ARTIFACT_VERSION",
    "MAX_ARTIFACT_BYTES",
    "SUPPORTED_VERSIONS",
    "V1",
    "V2",
    "ArtifactTurn",
    "BackendInfo",
    "Continuation",
    "ExecutionArtifact",
    "Relation",
    "artifact_context",
    "build_artifact",
    "check_destination",
    "dumps_artifact",
    "load_schema",
    "parse_artifact",
    "plan_turn",
    "public_url",
    "read_artifact",
    "resolve_version",
    "schema_text",
    "validate",
    "write_artifact",
]


def __getattr__(name: str) -> Any:
    # `schema_command` is built on first use, so importing this package never imports click.
    if name == "schema_command":
        return _schema_command()
    raise AttributeError(f"module 'ore.artifacts' has no attribute {name!r}")


@cache
def _schema_command() -> Any:
    import click

    @click.group(name="schema", context_settings={"help_option_names": ["-h", "--help"]})
    def schema() -> None:
        """Print the JSON Schemas of ORE's data formats, to validate them without ORE."""

    @schema.command(name="artifact")
    @click.option(
        "--version",
        "version",
        type=click.Choice(["v1", "v2", *SUPPORTED_VERSIONS]),
        default=ARTIFACT_VERSION,
        show_default=True,
        help="Which artifact version (v2 is what ORE writes; v1 is upstream's).",
    )
    def artifact(version: str) -> None:
        """Print the JSON Schema (draft 2020-12) of an execution artifact.

        \b
        Example:
          ore schema artifact > ore.exec.v2.schema.json
          ore schema artifact --version v1
        """
        click.echo(schema_text(version), nl=False)

    return schema
