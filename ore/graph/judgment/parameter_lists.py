"""The parts of a one-line signature as the index keeps it (`def f(a: int, b=1) -> str:`,
`function f(a?: T): U {`): its parameters and its return annotation. Read by `similar_signature`
to compare signatures and by `consistency` to count parameters: text, not a question.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["NAME", "Parameter", "parameter_list", "parameters", "return_shape"]

#: An identifier of the languages indexed (`$` in JavaScript's).
NAME = re.compile(r"[A-Za-z_$][\w$]*")


class Parameter(NamedTuple):
    """One parameter of a one-line signature: its name, annotation (spaces dropped), whether it
    has a default, and whether it takes what is left (`*args`, `**kwargs`, `...rest`, Go's
    `args ...T`): a catch-all, which says little about what a function does."""

    name: str
    annotation: str
    default: bool
    variadic: bool = False


def parameter_list(signature: str) -> list[Parameter]:
    """The parameters of a one-line signature (`self`, `cls`, `this`, `*`, `/` left out)."""
    start = signature.find("(")
    if start < 0:
        return []
    depth, current, parts = 0, "", []
    for ch in signature[start + 1 :]:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    out = []
    for part in parts:
        head, _eq, _default = part.partition("=")
        name_part, _colon, annotation = head.partition(":")
        found = NAME.search(name_part)
        if found and found.group() not in ("self", "cls", "this"):
            default = bool(_eq) or "?" in name_part
            typed = "".join(annotation.split())
            variadic = name_part.lstrip().startswith(("*", "...")) or typed.startswith("...")
            out.append(Parameter(found.group(), typed, default, variadic))
    return out


def parameters(signature: str) -> list[str]:
    """Parameter names of a one-line signature (`self`, `cls`, `*`, `/` left out)."""
    return [p.name for p in parameter_list(signature)]


def return_shape(signature: str) -> str:
    """The return annotation of a one-line signature, spaces dropped ('' when none)."""
    close = _closing_paren(signature)
    if close < 0:
        return ""
    rest = signature[close + 1 :].strip()
    if rest.startswith("->"):
        rest = rest[2:]
    elif rest.startswith(":"):
        rest = rest[1:].split("=>")[0]
    else:
        return ""
    return "".join(rest.split()).rstrip("{:")


def _closing_paren(signature: str) -> int:
    start = signature.find("(")
    depth = 0
    for i in range(max(start, 0), len(signature)):
        ch = signature[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1
