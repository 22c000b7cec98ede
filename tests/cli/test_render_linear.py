"""Streamed Markdown at a terminal does work linear in the answer (issue 21, item 6).

`ore.cli.markdown.MarkdownStream` styles each line once and prints it once. Counted here, not
timed: the characters its line and inline passes look at, over a whole answer, grow as the
answer does (four times the answer, about four times the work), and stay a small multiple of
it even when the answer is built to keep text held (open code spans and links, unclosed code
blocks, long delimiter runs, one huge line).
"""

from __future__ import annotations

import re

import pytest

from ore.cli.markdown import MarkdownStream

BLOCK = """### Step {i}

Paragraph {i} says *something* about `thing_{i}` and **more** over a [link](http://x.org/{i}).

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


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The lengths of the texts the renderer's line and inline passes looked at."""
    looked: list[int] = []
    inline, complete = MarkdownStream._inline, MarkdownStream._complete

    def counting_inline(self: MarkdownStream, text: str, *, final: bool) -> int:
        looked.append(len(text))
        return inline(self, text, final=final)

    def counting_complete(self: MarkdownStream, line: str) -> None:
        looked.append(len(line))
        complete(self, line)

    monkeypatch.setattr(MarkdownStream, "_inline", counting_inline)
    monkeypatch.setattr(MarkdownStream, "_complete", counting_complete)
    return looked


def _stream(text: str, size: int) -> str:
    shown: list[str] = []
    stream = MarkdownStream(shown.append, width=60)
    for at in range(0, len(text), size):
        stream.feed(text[at : at + size])
    stream.close()
    return "".join(shown)


def _total(work: list[int], text: str, size: int) -> int:
    work.clear()
    _stream(text, size)
    return sum(work)


@pytest.mark.invariant
@pytest.mark.parametrize("size", [1, 4])
def test_the_work_of_a_streamed_answer_grows_linearly(work: list[int], size: int) -> None:
    small, large = _long(10), _long(40)
    totals = [_total(work, small, size), _total(work, large, size)]
    assert totals[1] < 4.5 * totals[0]  # quadratic would be about 16 times
    assert totals[1] < 8 * len(large)  # and a small multiple of the answer


HOSTILE = {
    # a backtick that never closes, on one long line
    "open code span": lambda n: "x `" + "word " * n + "\n",
    # a link that never closes
    "open link": lambda n: "[" + "word " * n + "\n",
    "open link target": lambda n: "[a](" + "w" * 5 * n + "\n",
    # runs of delimiters longer than any emphasis, and many short ones
    "long runs": lambda n: ("*" * 500 + " ") * (n // 100) + "\n",
    "short runs": lambda n: "*a _b ~~c `d " * (n // 2) + "\n",
    # a code block that never closes, one huge line in it
    "open fence": lambda n: "```\n" + "x = 1; " * n,
    # a line that may still become a rule or an item for a long time
    "undecided start": lambda n: "- " * n + "x\n",
    "spaces": lambda n: " " * 5 * n + "x\n",
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_text_built_to_stay_held_still_costs_linear_work(work: list[int], name: str) -> None:
    text, quadruple = HOSTILE[name](4000), HOSTILE[name](16000)
    totals = [_total(work, text, 1), _total(work, quadruple, 1)]
    assert totals[1] < 4.5 * totals[0], totals
    assert totals[1] < 3 * len(quadruple), totals  # never re-reads a line for long


def test_a_piece_is_written_at_most_once_and_nothing_is_ever_redrawn() -> None:
    writes: list[str] = []
    stream = MarkdownStream(writes.append, width=60)
    text = _long(5)
    for at in range(0, len(text), 3):
        stream.feed(text[at : at + 3])
    stream.close()
    assert len(writes) <= len(text) // 3 + 2
    shown = "".join(writes)
    # only SGR styling: no cursor movement, no erasing, no carriage return
    assert not re.search(r"\x1b\[[0-9;]*[A-Za-ln-z]|\r", shown)
