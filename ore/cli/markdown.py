"""ORE's own Markdown for a terminal, styled as it streams: each line is styled once and printed
once, never drawn again, so the work is linear in the answer and no line shows twice.

Why not a full renderer (rich): a whole-document renderer re-lays the answer out to change a
line, and costs about 35 times a raw print per byte; this one costs a few times a raw print.
What it styles: ATX headings, **bold**, *italic*, ~~strike~~, `code`, [links](url), fenced code
blocks (fences hidden, keywords, strings, numbers and comments coloured), bullet and numbered
list items, block quotes and rules; tables, HTML and the rest pass as text.

Streaming: a line's block (heading, item, quote, rule, fence) is decided from its first
characters, which are held until they decide it; then its text is shown as it arrives. An inline
construct that is still open is held until it closes, at most `HOLD` characters (then its marker
is shown as text), and a delimiter run is held until the character after it arrives; emphasis
is styled from its opening delimiter on (flanking rules, as CommonMark opens it) and ends with
its line. Code lines and fence lines are shown when complete. So what is printed never changes,
and however the answer is cut into pieces the bytes written are the same as for the whole text
at once (lines and runs longer than `HOLD` aside).

Every piece passes `console.visible` first: ORE's own SGR styling is the only escape written.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable

from .console import CONTROL_RANGES, CONTROL_RANGES_BUT_LAYOUT, out, visible

__all__ = ["HOLD", "MarkdownStream"]

#: Most characters an open code span or link, or an undecided line start, is held for.
HOLD = 200

#: Characters that may start Markdown inside a line, and the controls `visible` escapes: a
#: piece holding none of them, in the middle of a line of text, is written as it is.
_SPECIAL = re.compile(f"[\n\\\\`*_~\\[{CONTROL_RANGES}]")
#: What `console.visible` escapes (all but line breaks and tabs), and that or a line break.
_UNSAFE = re.compile(f"[{CONTROL_RANGES_BUT_LAYOUT}]")
_BREAK = re.compile(f"[\n{CONTROL_RANGES_BUT_LAYOUT}]")
_INLINE = re.compile(r"\\|`+|\*+|_+|~+|\[")
#: What may close or end a held code span, or a held link.
_TICK_STOP = re.compile("[`\n]")
_LINK_STOP = re.compile(r"[\[\]()\n]")
_SPACE = re.compile(r"\s")
_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_LINK = re.compile(r"\[([^\[\]\n]*)\]\(([^()\s]*)\)")
_LINK_OPEN = re.compile(r"\[[^\[\]\n]*(?:\]\(?[^()\s]*)?")
_CLOSERS = {n: re.compile(f"(?<!`)`{{{n}}}(?!`)") for n in range(1, 4)}

# Line starts. `_UNDECIDED` matches every prefix of a line whose block its next characters may
# still change (a heading's `#`, a rule or an item's marker, a number, a fence's first marks).
_UNDECIDED = re.compile(
    r"[ \t]*(?:#{1,6}[ \t]*|[-*_+](?:[ \t]*[-*_])*[ \t]*|\d{1,9}(?:[.)][ \t]*)?|`{1,2}|~{1,2}"
    r"|(?:>[ \t]*)+)?"
)
#: The characters a line that is not a paragraph's may start with.
_STARTS = frozenset(" \t#>-*+_`~0123456789")
_FENCE = re.compile(r"( *)(`{3,}|~{3,})")
_RULE = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+|$)")
_QUOTE = re.compile(r"(?: {0,3}>[ ]?)+")
_ITEM = re.compile(r"([ \t]*)([-*+]|\d{1,9}[.)])(?:[ \t]+|$)")

# SGR parameters: ORE's look.
_HEADINGS = {1: "1;4;38;5;75", 2: "1;38;5;75"}
_HEADING_MORE = "1"
_QUOTE_TEXT = "3"
_CODE_SPAN = "38;5;180"
_LINK_TEXT = "4;38;5;75"
_DIM = "2"
_CODE_COLOURS = {
    "comment": "38;5;245",
    "string": "38;5;186",
    "number": "38;5;141",
    "keyword": "38;5;204",
}
_KEYWORDS = (
    "and as async await break case catch class const continue def default defer del do elif"
    " else enum except export extends false fi finally fn for from func function go if impl"
    " import in interface is lambda let loop match mod new nil none not null or package pass"
    " pub raise return self static struct switch then this throw true try type use var void"
    " while with yield None True False"
)
_CODE_TOKEN = re.compile(
    r"(?P<comment>(?:#|//|--(?=\s)).*)"
    r"|(?P<string>\"(?:[^\"\\]|\\.)*\"?|'(?:[^'\\]|\\.)*'?)"
    r"|(?P<number>\b\d[\d_]*(?:\.\d+)?\b)"
    r"|(?P<keyword>\b(?:" + "|".join(_KEYWORDS.split()) + r")\b)"
)


#: The escapes `MarkdownStream._sgr` made, by style (a few dozen at most).
_SGR: dict[tuple[str, bool, bool, bool], str] = {}


def _paint(match: re.Match[str]) -> str:
    return f"\x1b[{_CODE_COLOURS[match.lastgroup or 'keyword']}m{match.group()}\x1b[39m"


def _stdout(text: str) -> None:
    out(text, nl=False)


class MarkdownStream:
    """An answer styled while it streams: `feed` each piece, then `close` (also after an error
    or Ctrl-C: what arrived is shown, styling ended).

    :param write: where styled text goes (stdout by default); called once per piece at most.
    :param width: the width of a rule (the terminal's by default).
    """

    __slots__ = (
        "_base",
        "_bold",
        "_fence",
        "_held",
        "_italic",
        "_out",
        "_parts",
        "_prev",
        "_started",
        "_strike",
        "_whole",
        "_width",
        "_write",
    )

    def __init__(self, write: Callable[[str], object] | None = None, width: int | None = None):
        self._write = write if write is not None else _stdout
        self._width = max(1, width if width is not None else shutil.get_terminal_size().columns)
        self._out: list[str] = []  # styled text of the piece being fed
        self._held = ""  # the end of the current line not yet shown (see HOLD)
        self._parts: list[str] = []  # a line shown only when complete: its pieces so far
        self._whole = False  # the current line is shown only when complete (code, a fence)
        self._started = False  # the current line's block is decided and its start shown
        # the open code block's fence: its mark, its length, its indentation
        self._fence: tuple[str, int, int] | None = None
        self._base = ""  # the current line's SGR parameters (a heading's, a quote's)
        self._bold = self._italic = self._strike = False
        self._prev = " "  # the last character of the line's text gone through

    def feed(self, piece: str) -> None:
        if self._started:
            held = self._held
            if not held:
                if not _SPECIAL.search(piece):
                    if piece:  # text in the middle of a line: as it is
                        self._write(piece)
                        self._prev = piece[-1]
                    return
                if _UNSAFE.search(piece):
                    piece = visible(piece, keep="\n\t")
                text = piece
            else:
                if _UNSAFE.search(piece):
                    piece = visible(piece, keep="\n\t")
                if len(held) + len(piece) <= HOLD and self._still_open(piece):
                    self._held = held + piece
                    return
                text = held + piece
            if "\n" not in text:  # more of a line of text
                self._held = text[self._inline(text, final=False) :]
                self._flush()
                return
        else:
            if self._whole and not _BREAK.search(piece):
                self._parts.append(piece)  # code: shown when its line is complete
                return
            if _UNSAFE.search(piece):
                piece = visible(piece, keep="\n\t")
            if self._whole:
                if "\n" not in piece:
                    self._parts.append(piece)
                    return
                text = "".join(self._parts) + piece
                self._parts.clear()
            else:
                text = self._held + piece
        self._held = ""
        lines = text.split("\n")
        for line in lines[:-1]:
            self._complete(line)
        self._partial(lines[-1])
        self._flush()

    def close(self) -> None:
        """What is held shown as the answer's last line, styling ended, the line ended."""
        text = "".join(self._parts) + self._held
        self._parts.clear()
        self._held = ""
        if text or self._started:
            self._complete(text)
        self._flush()

    # -- lines ------------------------------------------------------------------------------

    def _still_open(self, piece: str) -> bool:
        """Whether the code span or link held open stays open, undecided, with `piece` (so
        the held text need not be looked at again)."""
        held = self._held
        mark = held[0]
        if mark in "`*_~" and not held.strip(mark) and not piece.strip(mark):
            return True  # a delimiter run that goes on
        if held[0] == "`":
            return held[-1] != "`" and not _TICK_STOP.search(piece)
        if held[0] == "[" and held[-1] != "]":
            return not _LINK_STOP.search(piece) and ("](" not in held or not _SPACE.search(piece))
        return False

    def _flush(self) -> None:
        if self._out:
            shown = "".join(self._out)
            self._out.clear()
            self._write(shown)

    def _complete(self, line: str) -> None:
        """A whole line (its start already shown when `_started`)."""
        self._whole = False
        emit = self._out.append
        if not self._started:
            if self._fence is not None:
                mark, length, indent = self._fence
                fence = _FENCE.match(line)
                if (
                    fence
                    and fence.group(2)[0] == mark
                    and len(fence.group(2)) >= length
                    and not line[fence.end() :].strip()
                ):
                    self._fence = None  # the closing fence: not shown
                    return
                if indent and line[:indent].isspace():
                    line = line[indent:]  # the fence's own indentation (in a list item)
                emit(_CODE_TOKEN.sub(_paint, line))
                emit("\n")
                return
            if not line:
                emit("\n")
                return
            if line[0] not in _STARTS:  # a paragraph's line
                self._started = True
                self._inline(line, final=True)
                self._end_line()
                return
            fence = _FENCE.match(line)
            if fence and not (fence.group(2)[0] == "`" and "`" in line[fence.end() :]):
                mark = fence.group(2)
                self._fence = (mark[0], len(mark), len(fence.group(1)))  # not shown
                return
            if not line.strip():
                emit("\n")
                return
            if _RULE.fullmatch(line):
                emit(f"\x1b[{_DIM}m{'─' * self._width}\x1b[0m\n")
                return
            line = line[self._begin(line) :]
        self._inline(line, final=True)
        self._end_line()

    def _end_line(self) -> None:
        emit = self._out.append
        if self._base or self._bold or self._italic or self._strike:
            emit("\x1b[0m")
        emit("\n")
        self._started = self._bold = self._italic = self._strike = False
        self._base = ""
        self._prev = " "

    def _partial(self, text: str) -> None:
        """The start of a line whose end has not arrived: shown as far as it is decided."""
        if not self._started:
            if self._fence is not None:
                self._whole = True
                if text:
                    self._parts.append(text)
                return
            if not text:
                return
            if text[0] not in _STARTS:  # a paragraph's line
                self._started = True
            elif _FENCE.match(text):
                self._whole = True
                self._parts.append(text)
                return
            elif len(text) <= HOLD and _UNDECIDED.fullmatch(text):
                self._held = text
                return
            else:
                text = text[self._begin(text) :]
        self._held = text[self._inline(text, final=False) :]

    def _begin(self, line: str) -> int:
        """Show the start of a heading, quote, list item or paragraph; where its text starts."""
        emit = self._out.append
        self._started = True
        heading = _HEADING.match(line)
        if heading:
            self._base = _HEADINGS.get(len(heading.group(1)), _HEADING_MORE)
            emit(self._sgr())
            return heading.end()
        quote = _QUOTE.match(line)
        if quote:
            emit(f"\x1b[{_DIM}m{'▌ ' * quote.group().count('>')}")
            self._base = _QUOTE_TEXT
            emit(self._sgr())
            return quote.end()
        item = _ITEM.match(line)
        if item:
            marker = item.group(2)
            shown = "•" if marker in "-*+" else marker
            emit(f"{item.group(1)}\x1b[1m{shown}\x1b[0m ")
            return item.end()
        return 0

    def _sgr(self) -> str:
        """The escape that sets the line's style and the emphasis now open, from plain."""
        key = (self._base, self._bold, self._italic, self._strike)
        shown = _SGR.get(key)
        if shown is None:
            codes = [self._base] if self._base else []
            codes += [c for c, on in zip("139", key[1:], strict=True) if on]
            shown = _SGR[key] = "\x1b[" + ";".join(["0", *codes]) + "m"
        return shown

    # -- inline -----------------------------------------------------------------------------

    def _inline(self, text: str, *, final: bool) -> int:
        """Show `text` (the rest of a line) styled as far as it is decided; how much was shown.
        With `final` the line is complete and everything is decided."""
        emit = self._out.append
        size = len(text)
        at = 0
        while True:
            found = _INLINE.search(text, at)
            if found is None:
                if at < size:
                    emit(text[at:])
                    self._prev = text[-1]
                return size
            start, end = found.span()
            if start > at:
                emit(text[at:start])
                self._prev = text[start - 1]
            mark = found.group()
            kind = mark[0]
            if kind == "[":
                link = _LINK.match(text, start, min(size, start + HOLD))
                if link:
                    emit(self._link(link.group(1), link.group(2)))
                    self._prev = ")"
                    at = link.end()
                    continue
                if not final and size - start <= HOLD and _LINK_OPEN.fullmatch(text, start):
                    return start  # may still become a link
                emit("[")
                self._prev = "["
                at = end
                continue
            if end == size and not final and len(mark) <= HOLD:
                return start  # the next character decides
            if kind == "\\":
                after = text[end] if end < size else ""
                shown = after if after in _PUNCT else "\\"
                emit(shown)
                self._prev = shown
                at = end + (1 if shown == after else 0)
                continue
            if kind == "`":
                decided = self._code_span(text, start, end, final)
                if decided is None:
                    return start
                at = decided
                continue
            after = text[end] if end < size else " "
            if not self._emphasis(kind, len(mark), self._prev, after):
                emit(mark)
            self._prev = kind
            at = end

    def _code_span(self, text: str, start: int, end: int, final: bool) -> int | None:
        """Show the code span opening at `start` (or its backticks as text); where the text
        goes on, None while its end may still arrive."""
        size = len(text)
        reach = start + HOLD
        closer = _CLOSERS.get(end - start)
        found = closer.search(text, end, min(size, reach)) if closer else None
        if found and (found.end() < size or final):
            if found.end() == min(size, reach) and found.end() < size and text[found.end()] == "`":
                found = None  # a longer run, cut by the reach
        elif found or (not final and size <= reach):
            return None
        if found is None:
            self._out.append(text[start:end])
            self._prev = "`"
            return end
        code = text[end : found.start()]
        if len(code) > 2 and code[0] == code[-1] == " " and code.strip():
            code = code[1:-1]
        self._out.append(f"\x1b[0;{_CODE_SPAN}m{code}{self._sgr()}")
        self._prev = "`"
        return found.end()

    def _emphasis(self, kind: str, length: int, before: str, after: str) -> bool:
        """Open or close the emphasis a delimiter run asks for (CommonMark's flanking rules);
        whether it did (else the run is text)."""
        if kind == "~":
            if length != 2:
                return False
            names: tuple[str, ...] = ("_strike",)
        elif length > 3:
            return False
        else:
            names = {1: ("_italic",), 2: ("_bold",), 3: ("_bold", "_italic")}[length]
        left = not after.isspace() and (after not in _PUNCT or before.isspace() or before in _PUNCT)
        right = not before.isspace() and (
            before not in _PUNCT or after.isspace() or after in _PUNCT
        )
        if kind == "_":
            can_open = left and (not right or before in _PUNCT)
            can_close = right and (not left or after in _PUNCT)
        else:
            can_open, can_close = left, right
        states = [getattr(self, name) for name in names]
        if all(states) and can_close:
            on = False
        elif not any(states) and can_open:
            on = True
        else:
            return False
        for name in names:
            setattr(self, name, on)
        self._out.append(self._sgr())
        return True

    def _link(self, label: str, url: str) -> str:
        shown = f"\x1b[0;{_LINK_TEXT}m{label}"
        if url and url != label:
            shown += f"\x1b[0;{_DIM}m ({url})"
        return shown + self._sgr()
