"""Artifact versions and their JSON Schemas: loading, validating, and one-line error messages.

Each version has one schema file in `ore/schemas/<version>.json` (draft 2020-12), frozen once
released. `jsonschema` is imported only here, and only when something is validated.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from functools import cache
from typing import Any

from ..errors import ArtifactError
from ._document import ARTIFACT_VERSION, SUPPORTED_VERSIONS

__all__ = [
    "check",
    "json_type",
    "load_schema",
    "quote",
    "resolve_version",
    "schema_text",
    "where",
]


def resolve_version(name: str) -> str:
    """The full version string for `name` ("v1", "ore.exec.v1", ...); ArtifactError if unknown."""
    full = name if name.startswith("ore.exec.") else f"ore.exec.{name}"
    if full not in SUPPORTED_VERSIONS:
        known = ", ".join(SUPPORTED_VERSIONS)
        raise ArtifactError(f"unknown artifact version {quote(name)}; this ORE knows {known}")
    return full


def _schema_path(version: str) -> str:
    return os.path.join(
        os.path.dirname(os.path.dirname(__file__)), "schemas", f"{resolve_version(version)}.json"
    )


def schema_text(version: str = ARTIFACT_VERSION) -> str:
    """The JSON Schema (draft 2020-12) of `version`, as shipped: print it to validate elsewhere."""
    with open(_schema_path(version), encoding="utf-8") as f:
        return f.read()


def load_schema(version: str = ARTIFACT_VERSION) -> dict[str, Any]:
    """The JSON Schema of `version` as a dict."""
    schema: dict[str, Any] = json.loads(schema_text(version))
    return schema


@cache
def _validator(version: str) -> Any:
    # No stubs ship with jsonschema, hence `Any` here and the ignores.
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]

    return Draft202012Validator(load_schema(version))


def check(data: object, version: str, name: str) -> None:
    """Validate `data` against `version`'s schema; ArtifactError names the first failure's path.

    :param name: how to call the data in the message, e.g. "artifact 'a.json'".
    """
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped, unused-ignore]

    try:
        error = best_match(_validator(version).iter_errors(data))
    except RecursionError:
        raise ArtifactError(f"{name} is nested too deeply to be an artifact") from None
    if error is not None:
        raise ArtifactError(f"{name} is not valid {version}: {_describe(error)}")


def _describe(error: Any) -> str:
    path = _json_path(error.absolute_path)
    kind, value, instance = error.validator, error.validator_value, error.instance
    if kind == "required" and isinstance(instance, dict):
        missing = next((k for k in value if k not in instance), "?")
        return f"{_json_path([*error.absolute_path, missing])} is missing"
    if kind == "type":
        wanted = " or ".join(_a(t) for t in ([value] if isinstance(value, str) else value))
        return f"{path} must be {wanted}, not {json_type(instance)}"
    if kind == "const":
        return f"{path} must be {json.dumps(value)}"
    if kind == "enum":
        return f"{path} must be one of {', '.join(json.dumps(v) for v in value)}"
    if kind in ("minLength", "minItems"):
        return f"{path} must not be empty"
    return f"{path} fails the schema's {kind!s} rule"


def _json_path(parts: Sequence[object]) -> str:
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and part.isidentifier() and part.isascii() and len(part) <= 40:
            out += f".{part}"
        else:
            out += f"[{quote(str(part))}]"
    return out


def _a(type_name: str) -> str:
    return {"object": "an object", "array": "an array", "integer": "an integer"}.get(
        type_name, type_name if type_name == "null" else f"a {type_name}"
    )


def json_type(value: object) -> str:
    """The JSON name of a parsed value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def quote(value: str, limit: int = 40) -> str:
    """`value` quoted for a one-line message: control characters escaped, length capped."""
    text = json.dumps(value[:limit])
    return text if len(value) <= limit else text[:-1] + '..."'


def where(source: str | os.PathLike[str] | None) -> str:
    """How messages name an artifact read from `source` ("-" is stdin)."""
    if source is None:
        return "the artifact"
    return "the artifact on stdin" if str(source) == "-" else f"artifact '{os.fspath(source)}'"
