"""Execution artifacts: one turn as a versioned, schema-validated JSON document.

An artifact records what one single turn asked and answered, so that another process can replay
it (send the recorded messages again, perhaps to another model) or chain from it (pass its answer
as turn-scoped context to a new prompt). Chaining happens through data only: ORE never calls ORE.

Versions (the `artifact_version` string; each has a frozen JSON Schema in `ore/schemas/`):

- `ore.exec.v1`: upstream ORE v0.9's format, read exactly as upstream writes it, and written on
  request (`version="ore.exec.v1"`) with exactly upstream's fields.
- `ore.exec.v2`: a superset of v1 (every v1 field keeps its name, type and meaning) that adds
  `input.messages` (exactly what was sent), `ore_version`, `backend` and `lineage`.
- `ore.exec.v3`: v2 plus optional fields only: the turn controls sent with the messages
  (`input.options`, `input.keep_alive`, `input.schema`, `input.think`, `input.images`) and the
  model's reasoning (`output.thinking`). The default since ORE 0.11.

`jsonschema` is imported only when an artifact is read or written: a plain turn never pays for
it. Names are imported on first use: the turn log's record of a turn loads only the document's
module (`_document`: the versions and `turn_document`), none of the contract classes, the
replay planner or the schema files. `ore schema` (in `ore.cli.schema`) prints the schemas. See docs/artifacts.md for the format and bump rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ._contract import (
        BackendInfo,
        Continuation,
        ExecutionArtifact,
        build_artifact,
        document_artifact,
        public_url,
        validate,
    )
    from ._document import (
        ARTIFACT_VERSION,
        SUPPORTED_VERSIONS,
        V1,
        V2,
        V3,
        Relation,
        turn_document,
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
    from ._schema import load_schema, resolve_version, schema_text

__all__ = [
    "ARTIFACT_VERSION",
    "MAX_ARTIFACT_BYTES",
    "SUPPORTED_VERSIONS",
    "V1",
    "V2",
    "V3",
    "ArtifactTurn",
    "BackendInfo",
    "Continuation",
    "ExecutionArtifact",
    "Relation",
    "artifact_context",
    "build_artifact",
    "check_destination",
    "document_artifact",
    "dumps_artifact",
    "load_schema",
    "parse_artifact",
    "plan_turn",
    "public_url",
    "read_artifact",
    "resolve_version",
    "schema_text",
    "turn_document",
    "validate",
    "write_artifact",
]

if not TYPE_CHECKING:  # type checkers see the imports above
    __getattr__, __dir__ = exports(
        __name__,
        {
            "ARTIFACT_VERSION": "._document",
            "ArtifactTurn": "._replay",
            "BackendInfo": "._contract",
            "Continuation": "._contract",
            "ExecutionArtifact": "._contract",
            "MAX_ARTIFACT_BYTES": "._io",
            "Relation": "._document",
            "SUPPORTED_VERSIONS": "._document",
            "V1": "._document",
            "V2": "._document",
            "V3": "._document",
            "artifact_context": "._replay",
            "build_artifact": "._contract",
            "check_destination": "._io",
            "document_artifact": "._contract",
            "dumps_artifact": "._io",
            "load_schema": "._schema",
            "parse_artifact": "._io",
            "plan_turn": "._replay",
            "public_url": "._contract",
            "read_artifact": "._io",
            "resolve_version": "._schema",
            "schema_text": "._schema",
            "turn_document": "._document",
            "validate": "._contract",
            "write_artifact": "._io",
        },
    )
