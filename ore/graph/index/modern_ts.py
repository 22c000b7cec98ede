"""TypeScript syntax the bundled grammar lacks, rewritten in place before a second parse.

tree-sitter-typescript 0.23.2 (the newest on the index) reads some newer syntax as errors:
variance annotations, import types, generic call signatures that start a line, generic tagged
templates, escaped backticks in template literal types. Each rewrite keeps the length and the
lines (every position holds), so what the second parse finds sits where the file has it.
Plain bytes in, bytes out: no parser here (`extract` parses).
"""

from __future__ import annotations

import re

__all__ = ["modern_ts"]

#: `<in T>`, `<out T>`, `<in out T>` (TS 4.7 variance annotations) and `<const T>` in a call
#: signature, which the bundled grammar (tree-sitter-typescript 0.23.2, the newest on the
#: index) does not know. Blanked to spaces (same length, so every position holds) before a
#: second parse.
_VARIANCE = re.compile(rb"\b(?:in\s+out|out|in|const)(?=\s+[A-Za-z_$][\w$]*\s*(?:extends\b|=|,|>))")
_LOOK_BACK = 512  # bytes a variance keyword's `<` or `,` may sit before it (comments between)
#: `import("x").T` in a type (TS 2.9 import types), which the grammar reads as an error: the
#: call is blanked to an identifier of the same length (`________.T`), a type reference it reads.
_IMPORT_TYPE = re.compile(
    rb"""\bimport\(\s*(?:"[^"\n]*"|'[^'\n]*')\s*\)(?=\.(?!then\b|catch\b|finally\b)[A-Za-z_$])"""
)
#: A generic call signature on its own line (`  <A, B>(f: F): G` in an object type of overloads,
#: after a member whose return type is a function type): the grammar reads the `<` as going on
#: the line before. Its first indentation space becomes `;`, the separator TS infers there.
_CALL_SIGNATURE = re.compile(
    rb"^[ \t](?=[ \t]*<[ \t]*(?:[A-Za-z_$][\w$]*(?:\s+extends\b|\s*[,>=])|\n))", re.M
)


def _variance_blanked(data: bytes) -> bytes:
    """`data` with each variance keyword that follows `<` or `,` (whitespace and `/* */`
    comments between) turned to spaces. Each look back is bounded: linear in the file."""
    out = bytearray(data)
    for match in _VARIANCE.finditer(data):
        if _after_open(data, match.start()):
            out[match.start() : match.end()] = b" " * (match.end() - match.start())
    return bytes(out)


def _after_open(data: bytes, at: int) -> bool:
    """Whether `<` or `,` comes before `at`, past whitespace and block comments."""
    return _previous(data, at) in b"<,"


def _previous(data: bytes, at: int) -> bytes:
    """The byte before `at` that is neither whitespace nor inside a `/* */` comment (b"" when
    none is near): a scan back over at most `_LOOK_BACK` bytes of space and 16 comments."""
    i, spaces, hops = at, 0, 0
    while i > 0:
        i -= 1
        ch = data[i : i + 1]
        if ch in (b" ", b"\t", b"\r", b"\n"):
            spaces += 1
            if spaces > _LOOK_BACK:
                return b""
            if ch == b"\n" and hops < 16:  # a line holding only a `//` comment
                start = data.rfind(b"\n", max(0, i - _LOOK_BACK), i) + 1
                if data[start:i].lstrip().startswith(b"//"):
                    i, hops = start, hops + 1
            continue
        if ch == b"/" and data[i - 1 : i] == b"*" and hops < 16:
            opened = data.rfind(b"/*", 0, i - 1)
            if opened < 0:
                return b""
            i, hops = opened, hops + 1
            continue
        return ch
    return b""


def _signature_separated(match: re.Match[bytes]) -> bytes:
    """`;` for the first indentation byte of a generic call signature that follows a type."""
    previous = _previous(match.string, match.start())
    ends_a_type = previous.isalnum() or previous in (b"_", b"$", b">", b")", b"]", b"}")
    if previous == b">" and _previous_two(match.string, match.start()) == b"=>":
        ends_a_type = False  # a curried arrow function: `(a) =>\n  <B>(b) => ...`
    return b";" if ends_a_type and previous else match.group()


def _previous_two(data: bytes, at: int) -> bytes:
    stripped = data[max(0, at - _LOOK_BACK) : at].rstrip()
    return stripped[-2:]


def _underscores(match: re.Match[bytes]) -> bytes:
    return b"_" * len(match.group())


#: The type arguments of a generic tagged template (sql<{ id: number }>`...`), which the
#: grammar reads only when they are a plain name: `>` then a backtick, walked back to its `<`.
_TAGGED = re.compile(rb"(?<!=)>`")
#: An escaped backtick, which the grammar cannot read in a template literal type.
_ESCAPED_BACKTICK = re.compile(rb"(?<!\\)((?:\\\\)*)\\`")


def _untagged(data: bytes) -> bytes:
    """`data` with the type arguments of generic tagged templates blanked (lines kept)."""
    out = bytearray(data)
    for match in _TAGGED.finditer(data):
        depth, i, floor = 0, match.start(), max(0, match.start() - _LOOK_BACK)
        while i >= floor:
            ch = data[i]
            if ch == ord(">") and data[i - 1 : i] != b"=":
                depth += 1
            elif ch == ord("<"):
                depth -= 1
                if depth == 0:
                    break
            i -= 1
        if (
            depth != 0
            or i < floor
            or not (data[i - 1 : i].isalnum() or data[i - 1 : i] in (b"_", b"$"))
        ):
            continue
        for k in range(i, match.start() + 1):
            if out[k] not in b"\r\n":
                out[k] = ord(" ")
    return bytes(out)


def modern_ts(data: bytes) -> bytes:
    """`data` with the TS syntax the grammar lacks rewritten in place (same length, same lines):
    variance annotations, import types, generic call signatures that start a line, generic
    tagged templates, escaped backticks."""
    if b"in " in data or b"out " in data:
        data = _variance_blanked(data)
    if b">`" in data:
        data = _untagged(data)
    data = _ESCAPED_BACKTICK.sub(rb"\1  ", data)
    return _CALL_SIGNATURE.sub(_signature_separated, _IMPORT_TYPE.sub(_underscores, data))
