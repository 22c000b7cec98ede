"""What ORE's own Markdown renderer (`ore.cli.markdown`) shows: each construct styled, markers
hidden, the rest as text; the same bytes however the answer is cut into pieces; and nothing
from the answer but its text reaches the terminal (`console.visible` first, ORE's SGR only).
"""

from __future__ import annotations

import random
import re

import pytest

from ore.cli.markdown import HOLD, MarkdownStream

ANSWER = """# Title

[r]: http://example.com/ref

Some *emphasis*, **bold**, `code` and a [link](http://example.com) in a line long enough to wrap
at the console's width, with snake_case_names, 2 * 3 * 4 and a [reference link][r] too.

## Lists

- one
- two
  continued

* loose item

1. first
2. second

---

> a quote
> more

```python
def f(x):

    return x  # a blank line above, inside the fence
```

| a | b |
|---|---|
| 1 | 2 |

~~~
a tilde fence

~~~

Last line, no newline at the end."""

#: ORE's own styling: SGR sequences only.
SGR = re.compile(r"\x1b\[[0-9;]*m")


def render(text: str) -> str:
    shown: list[str] = []
    stream = MarkdownStream(shown.append, width=40)
    stream.feed(text)
    stream.close()
    return "".join(shown)


def streamed(text: str, pieces: list[int] | int) -> str:
    shown: list[str] = []
    stream = MarkdownStream(shown.append, width=40)
    at = 0
    sizes = iter(pieces) if isinstance(pieces, list) else None
    while at < len(text):
        size = next(sizes) if sizes is not None else pieces
        stream.feed(text[at : at + size])
        at += size
    stream.close()
    return "".join(shown)


def plain(shown: str) -> str:
    return SGR.sub("", shown)


def styled(shown: str, text: str) -> set[str]:
    """The SGR parameters in force where `text` starts in `shown`."""
    at = shown.index(text)
    codes: set[str] = set()
    for match in SGR.finditer(shown, 0, at):
        for code in match.group()[2:-1].split(";"):
            if code in ("", "0"):
                codes.clear()
            elif code in ("22", "23", "24", "29", "39"):
                codes.discard({"22": "1", "23": "3", "24": "4", "29": "9", "39": "38"}[code])
            else:
                codes.add(code)
    return codes


def test_each_construct_is_styled_and_its_markers_hidden() -> None:
    shown = render(ANSWER)
    text = plain(shown)
    lines = text.splitlines()
    assert "Title" in lines and "# Title" not in text and "## Lists" not in text
    assert {"1", "4"} <= styled(shown, "Title") and "1" in styled(shown, "Lists")
    assert "3" in styled(shown, "emphasis") and "1" in styled(shown, "bold")
    assert "Some emphasis, bold, code and a link (http://example.com)" in text
    assert "38" in styled(shown, "code") and "4" in styled(shown, "link")
    assert "snake_case_names, 2 * 3 * 4" in text  # no emphasis inside words or around spaces
    assert "• one" in lines and "• loose item" in lines and "1. first" in lines
    assert "  continued" in lines
    assert "─" * 40 in lines
    assert "▌ a quote" in lines and "3" in styled(shown, "a quote")
    assert "```" not in text and "~~~" not in text
    assert "def f(x):" in lines and "    return x  # a blank line above, inside the fence" in lines
    assert re.search(r"\x1b\[38;5;\d+mdef\x1b\[39m", shown)  # highlighted: a keyword
    assert re.search(r"\x1b\[38;5;\d+m# a blank line above", shown)  # and a comment
    assert "| a | b |" in lines and "|---|---|" in lines  # a table passes as text
    assert "[r]: http://example.com/ref" in lines  # so does what it does not know
    assert lines[-1] == "Last line, no newline at the end."
    assert shown.endswith("\n")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a `x` b", "a x b"),
        ("a `` x ` y `` b", "a x ` y b"),
        ("an `open span", "an `open span"),
        ("\\*not\\* emphasis", "*not* emphasis"),
        ("**bold** and ~~struck~~", "bold and struck"),
        ("a ~single~ tilde", "a ~single~ tilde"),
        ("[text](url) and [no link", "text (url) and [no link"),
        ("#hashtag", "#hashtag"),
        ("-- not a rule", "-- not a rule"),
        ("1.5 is a number", "1.5 is a number"),
        ("> > nested", "▌ ▌ nested"),
        ("   ```\n   indented fence\n   ```", "indented fence"),
        ("a **** b", "a **** b"),
    ],
)
def test_small_cases(text: str, expected: str) -> None:
    assert plain(render(text)) == expected + "\n"


@pytest.mark.parametrize("size", [1, 2, 3, 4, 7, 17, 10_000])
def test_streamed_in_any_pieces_the_bytes_are_those_of_the_whole(size: int) -> None:
    assert streamed(ANSWER, size) == render(ANSWER)


def test_random_text_cut_at_random_shows_the_same_bytes() -> None:
    parts = ["a", " ", "\n", "\n\n", "*", "**", "_", "`", "```", "~~", "[", "](", ")", "# "]
    parts += ["- ", "1. ", "> ", "\\", "|", "---", "x_y", "\t", "字", "\x1b]0;t\x07", "\r"]
    rng = random.Random(21)
    for _ in range(400):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(1, 50)))
        cuts = [rng.randint(1, 6) for _ in range(len(text))]
        assert streamed(text, cuts) == render(text), repr(text)


def test_a_construct_open_longer_than_the_hold_is_shown_as_text() -> None:
    text = "a `" + "x" * (HOLD + 10) + "` b"
    assert plain(render(text)).startswith("a `xxx")
    assert streamed(text, 1) == render(text)


HOSTILE = (
    "# copy \x1b]52;c;cHduZWQ=\x07\n\n**title \x1b]0;x\x07** clear \x1b[2J c1 \x9b31m\n"
    "```\nls \u2028 bidi \u202egnp.exe dcs \x1bPq\x1b\\ end\n```\n"
)


@pytest.mark.invariant
@pytest.mark.parametrize("size", [1, 5, 10_000])
def test_only_ore_styling_reaches_the_terminal(size: int) -> None:
    shown = streamed(HOSTILE, size)
    assert not re.search("[\x00-\x09\x0b-\x1a\x1c-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e]", shown)
    assert not SGR.sub("", shown).count("\x1b")  # every ESC left starts ORE's own SGR
    text = plain(shown)
    assert "\\x1b]52;c;cHduZWQ=\\x07" in text and "\\x9b31m" in text
    assert "\\u2028" in text and "\\u202egnp.exe" in text and "\\x1bPq\\x1b\\ end" in text
