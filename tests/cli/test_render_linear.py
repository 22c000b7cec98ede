"""Streamed Markdown at a terminal does work linear in the answer (issue 21, item 6).

`MarkdownStream` re-renders only the open end of an answer: the blocks that can no longer change
are rendered a last time, printed for good and dropped. Counted here, not timed: the text parsed
and rendered per piece stays bounded by the open block however long the answer grows, and the
screen at the end is what rendering the whole answer at once shows.
"""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from rich.markdown import Markdown

from ore.cli import render

ANSWER = """# Title

[r]: http://example.com/ref

Some *emphasis*, **bold**, `code` and a [link](http://example.com) in a line long enough to wrap
at the console's width, with a [reference link][r] too.

## Lists

- one
- two
  continued

- loose item

1. first
2. second

3. third after a blank line

---

> a quote
> more

> another quote

```python
def f(x):

    return x  # a blank line above, inside the fence
```

| a | b |
|---|---|
| 1 | 2 |
| 3 | 4 |

    indented code

    more indented code

A paragraph
with a soft break, then ![an image](http://example.com/i.png)

***
Text after a rule.
- a list right after text

~~~
a tilde fence

~~~

Last line, no newline at the end."""

BLOCK = """Paragraph {i} says *something* about `thing_{i}` over a few words.

```python
def f_{i}(x):
    return x + {i}
```

- item {i}
- item {i} again

| n | n squared |
|---|---|
| {i} | {sq} |

"""


def _long(blocks: int) -> str:
    return "".join(BLOCK.format(i=i, sq=i * i) for i in range(blocks))


def _console(buffer: io.StringIO, color: bool) -> Console:
    # Not a terminal: the live lines are never drawn, so the buffer holds exactly what is
    # printed for good, the screen that stays once the stream is closed.
    return Console(file=buffer, width=60, color_system="truecolor" if color else None)


def _whole(text: str, color: bool) -> str:
    buffer = io.StringIO()
    _console(buffer, color).print(Markdown(text, code_theme="monokai"))
    return buffer.getvalue()


def _streamed(text: str, size: int, color: bool) -> str:
    buffer = io.StringIO()
    stream = render.MarkdownStream(console=_console(buffer, color))
    for at in range(0, len(text), size):
        stream.feed(text[at : at + size])
    stream.close()
    return buffer.getvalue()


def _same_links(text: str) -> str:
    return re.sub(r"id=\d+", "id=", text)  # rich numbers each hyperlink it writes


@pytest.fixture
def every_piece(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Render on every piece (no pause between renders); the lengths of the texts parsed."""
    monkeypatch.setattr(render, "_INTERVAL", 0.0)
    monkeypatch.setattr(render, "_BACKOFF", 0.0)
    parsed: list[int] = []
    real = render._parse

    def counting(parser: object, text: str, env: dict[str, object]) -> list[object]:
        parsed.append(len(text))
        return real(parser, text, env)

    monkeypatch.setattr(render, "_parse", counting)
    return parsed


@pytest.mark.parametrize("color", [False, True])
@pytest.mark.parametrize("size", [1, 4, 17, 10_000])
def test_streaming_an_answer_ends_on_the_screen_rendering_it_whole_shows(
    every_piece: list[int], size: int, color: bool
) -> None:
    assert _same_links(_streamed(ANSWER, size, color)) == _same_links(_whole(ANSWER, color))


def test_a_long_answer_streamed_with_pauses_ends_the_same_too() -> None:
    text = _long(40)
    assert _same_links(_streamed(text, 4, False)) == _same_links(_whole(text, False))


def test_the_text_rendered_per_piece_is_bounded_by_the_open_block(every_piece: list[int]) -> None:
    peaks = []
    for blocks in (10, 40):
        every_piece.clear()
        text = _long(blocks)
        _streamed(text, 4, True)
        assert len(every_piece) >= len(text) // 4  # one render per piece
        peaks.append(max(every_piece))
        # all the work: each piece re-renders at most the last two blocks
        assert sum(every_piece) <= 2 * len(BLOCK.format(i=blocks, sq=blocks)) * len(every_piece)
    # four times the answer, the same most text rendered for one piece
    assert peaks[1] <= peaks[0] + 20
    assert peaks[1] < 2 * len(BLOCK.format(i=99, sq=99 * 99))


def test_the_total_work_grows_linearly_with_the_answer(every_piece: list[int]) -> None:
    totals = []
    for blocks in (10, 40):
        every_piece.clear()
        _streamed(_long(blocks), 4, False)
        totals.append(sum(every_piece))
    assert totals[1] < 4.5 * totals[0]  # quadratic would be about 16 times


def test_a_block_that_never_closes_is_rendered_whole_but_correctly(
    every_piece: list[int],
) -> None:
    # one long code block: nothing can be settled, but the result is still the whole render
    text = "```\n" + "".join(f"line {i}\n\n" for i in range(60)) + "```\n\nAfter.\n"
    assert _streamed(text, 7, False) == _whole(text, False)


def test_reference_definitions_of_printed_blocks_still_resolve(every_piece: list[int]) -> None:
    text = "[r]: http://example.com/x\n\nIntro.\n\n" + "Para.\n\n" * 5 + "See [it][r].\n"
    out = _streamed(text, 1, False)
    assert out == _whole(text, False)
    assert "See it." in out  # a link, not `[it][r]` as text
