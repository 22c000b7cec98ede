"""A turn's controls from the command line: model options, keep-alive, the answer's schema,
thinking and images, resolved into one `TurnOptions` before any request.

Everything is checked here, before the server is asked anything: a malformed control or one the
chosen backend cannot send is a usage error (exit 2), an image that cannot be read or is not an
image is exit 1. A replay starts from the controls its artifact recorded; a flag overrides each.
`jsonschema` is imported only when there is a schema; a plain turn imports nothing here.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._fs import os_error_words, read_regular
from ..errors import OptionError, OreError, json_error_words
from .console import print_json
from .options import Options, parse_keep_alive, parse_model_options, parse_think

if TYPE_CHECKING:
    from ..turn_types import Image, TurnOptions

__all__ = [
    "MAX_IMAGE_BYTES",
    "check_schema",
    "compile_fields",
    "read_image",
    "resolve_schema",
    "show_schema",
    "turn_options",
]

#: The largest image `--attach` takes (each).
MAX_IMAGE_BYTES = 20 * 1024 * 1024
#: The largest schema file `--schema PATH` reads.
_MAX_SCHEMA_BYTES = 1024 * 1024
#: The deepest nesting of objects and lists a schema may have (checking one recurses per level).
_MAX_SCHEMA_DEPTH = 128
#: How a replayed artifact's recorded control is named in an error.
_RECORDED = "the artifact's input.{}"
#: Image formats by their first bytes (never by the file name).
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
_TYPES: dict[str, dict[str, Any]] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "bool": {"type": "boolean"},
    "list": {"type": "array", "items": {"type": "string"}},
}


def _any(o: Options) -> bool:
    controls = (o.option, o.attach, o.keep_alive, o.schema, o.think, o.no_think)
    return any(value not in (None, (), False) for value in controls)


def turn_options(
    o: Options, backend: str, recorded: Mapping[str, Any] | None = None
) -> TurnOptions:
    """The turn's controls: `recorded` (a replayed artifact's), each overridden by its flag;
    checked against what `backend` can send. Images are read (and a recorded one's hash
    compared) here, once per invocation."""
    from ..turn_types import NO_TURN_OPTIONS, TurnOptions

    if not _any(o) and not recorded:
        return NO_TURN_OPTIONS  # a plain turn: nothing to parse, nothing more to import
    old = recorded or {}
    # A flag replaces the recorded value of its key (all of `stop`, when it is given).
    options = {**_recorded_options(old.get("options")), **parse_model_options(o.option)}
    keep_alive = parse_keep_alive(o.keep_alive)
    think = parse_think(o.think, o.no_think)
    schema: Any
    if o.schema is not None:
        schema = resolve_schema(o.schema)
    else:
        schema = old.get("schema")
        if schema is not None:
            check_schema(schema, what=_RECORDED.format("schema"))
    if o.attach:
        images = tuple(read_image(path) for path in o.attach)
    else:
        from ..turn.files import read_again

        images = read_again(
            old.get("images"), read_image, noun="image", flag="--attach", field="images"
        )
    controls = TurnOptions(
        options=options,
        keep_alive=keep_alive if keep_alive is not None else old.get("keep_alive"),
        schema=schema,
        think=think if think is not None else old.get("think"),
        images=images,
    )
    from ..turn import refusal

    refused = refusal(backend, controls)
    if refused is not None:
        raise OptionError(refused)
    return controls


def _recorded_options(data: object) -> dict[str, Any]:
    """A replayed artifact's `input.options`, through the checks `-o` makes (a known key, a
    value of its type and range): an artifact is data from anywhere."""
    from ..model_options import check_model_options

    return check_model_options(data, _RECORDED.format("options"))


# -- --schema ------------------------------------------------------------------------------------


def resolve_schema(value: str) -> dict[str, Any]:
    """`--schema`: inline JSON Schema (text starting with `{`), the path of a file holding one,
    or a short field list compiled by `compile_fields`; checked to be a valid JSON Schema."""
    text = value.strip()
    if text.startswith("{"):
        schema = _json(text, "--schema")
    elif os.path.isfile(text) or text.endswith(".json"):
        schema = _json(_read_schema_file(text), f"the schema file '{text}'")
    else:
        schema = compile_fields(text)
    check_schema(schema)
    return schema


def _json(text: str, what: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, json.JSONDecodeError):
            why = json_error_words(exc)
        else:
            why = "it cannot be read"
        raise OptionError(f"{what} is not valid JSON: {why}") from None
    if not isinstance(data, dict):
        raise OptionError(f"{what} must be a JSON object (a JSON Schema)")
    return data


def _read_schema_file(path: str) -> str:
    try:
        data = read_regular(path, limit=_MAX_SCHEMA_BYTES, follow_symlinks=True)
    except OSError as exc:
        raise OreError(f"cannot read the schema file '{path}': {os_error_words(exc)}") from None
    if len(data) > _MAX_SCHEMA_BYTES:
        raise OreError(f"the schema file '{path}' is larger than 1 MiB")
    return data.decode("utf-8", errors="replace")


def compile_fields(text: str) -> dict[str, Any]:
    """A short field list as a JSON Schema object with every field required: fields separated by
    commas (by newlines when there are any, so a description may hold commas), each `NAME
    [TYPE][: description]` with TYPE one of str (the default), int, float, bool, list (of
    strings). `'name, age int, tags list: short words'`."""
    lines = text.splitlines() if "\n" in text.strip() else text.split(",")
    properties: dict[str, Any] = {}
    for raw in lines:
        head, sep, description = raw.partition(":")
        words = head.split()
        if not words and not sep:
            continue
        if not 1 <= len(words) <= 2 or not words[0].isidentifier():
            raise OptionError(
                f"--schema field {raw.strip()!r} is not NAME [TYPE][: description] "
                "(e.g. 'name, age int, tags list: short words')"
            )
        name, kind = words[0], words[1] if len(words) == 2 else "str"
        if kind not in _TYPES:
            raise OptionError(f"--schema field {name!r} has type {kind!r}: use {', '.join(_TYPES)}")
        if name in properties:
            raise OptionError(f"--schema field {name!r} is given more than once")
        prop = dict(_TYPES[kind])
        if description.strip():
            prop["description"] = description.strip()
        properties[name] = prop
    if not properties:
        raise OptionError("--schema names no fields")
    return {"type": "object", "properties": properties, "required": list(properties)}


def check_schema(schema: Mapping[str, Any], what: str = "--schema") -> None:
    """A usage error unless `schema` is a valid JSON Schema (its own metaschema's rules) that
    nests at most _MAX_SCHEMA_DEPTH levels. `what` names it in the error."""
    from jsonschema import validators  # type: ignore[import-untyped, unused-ignore]
    from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped, unused-ignore]

    if not isinstance(schema, Mapping):
        raise OptionError(f"{what} must be a JSON object (a JSON Schema)")
    from ..turn.answer import deeper_than

    if deeper_than(schema, _MAX_SCHEMA_DEPTH):
        raise OptionError(
            f"{what} nests deeper than {_MAX_SCHEMA_DEPTH} levels: ORE cannot check it safely"
        )
    try:
        validators.validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in exc.path)
        message = exc.message if len(exc.message) <= 200 else exc.message[:199] + "…"
        raise OptionError(f"{what} is not a valid JSON Schema: at ${where}: {message}") from None
    except (RecursionError, MemoryError):
        raise OptionError(f"{what} is too deeply nested to check") from None


def show_schema(o: Options) -> None:
    """`--schema-show`: print the JSON Schema `--schema` stands for; no request."""
    assert o.schema is not None
    print_json(resolve_schema(o.schema))  # one line in a pipe, indented at a terminal


# -- --attach ------------------------------------------------------------------------------------


def read_image(path: str) -> Image:
    """An image from a file, or from stdin for "-": a PNG, JPEG, WebP or GIF (by its bytes) of
    at most MAX_IMAGE_BYTES. Exit 1 with one line otherwise, before any request."""
    from ..turn_types import Image

    shown = "the image on stdin" if path == "-" else f"'{path}'"
    if path == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None or sys.stdin.isatty():
            raise OreError("--attach - reads the image from stdin, but nothing is piped in")
        data = stream.read(MAX_IMAGE_BYTES + 1)
    else:
        from ..turn.files import read_named

        data = read_named(path, MAX_IMAGE_BYTES, f"attach {shown}")
    if len(data) > MAX_IMAGE_BYTES:
        raise OreError(f"cannot attach {shown}: it is larger than the 20 MiB limit for an image")
    media_type = _media_type(data)
    if media_type is None:
        raise OreError(
            f"cannot attach {shown}: it is not a PNG, JPEG, WebP or GIF image (judged by its bytes)"
        )
    return Image(name=path, media_type=media_type, data=data)


def _media_type(data: bytes) -> str | None:
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None
