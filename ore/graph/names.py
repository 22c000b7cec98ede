"""How a file's name is written in ORE's answers: as valid Unicode (`shown_name`: each byte
that was not UTF-8 written `\\xNN`, so every JSON document is valid UTF-8), and on one line
(`plain_name`: control characters, line and paragraph separators and bidirectional overrides
written `\\xNN` too, so a table's cell or a text answer shows one name as one name). Below
the renderers and the judgments alike, which both write names into text.
"""

from __future__ import annotations

import re

__all__ = ["SURROGATE", "escape_surrogate", "plain_name", "shown_name"]

# C0 and C1 controls, DEL, the line and paragraph separators (a line break to many viewers)
# and the bidirectional overrides that can disguise text: what `ore.cli.console.visible`
# escapes too, so a name shows the same in a table and in an export.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: A lone surrogate: a byte of a file name that was not UTF-8 (surrogateescape).
SURROGATE = re.compile("[\ud800-\udfff]")


def shown_name(path: str) -> str:
    """`path` as valid Unicode: each byte that was not UTF-8 written `\\xNN`."""
    if not SURROGATE.search(path):
        return path
    return SURROGATE.sub(escape_surrogate, path)


def escape_surrogate(match: re.Match[str]) -> str:
    """The `\\xNN` (or `\\uNNNN`) a lone surrogate is written as."""
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def plain_name(path: str) -> str:
    """`shown_name`, with control characters shown as `\\xNN` as well: a name as one line of
    text, whatever line breaks or tabs it holds (a table's cell, a graph file's label)."""
    return _CONTROL.sub(_escape_control, shown_name(path))


def _escape_control(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
