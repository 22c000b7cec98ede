"""An answer and its reasoning, kept apart as they arrive: what both backends share.

Thinking models send their reasoning apart from the answer (Ollama's `message.thinking`; the
`reasoning_content` or `reasoning` of OpenAI-compatible servers), or inline, as a
`<think>...</think>` block at the start of the text (DeepSeek-R1 and Qwen3 distills behind
llama.cpp or vLLM without a reasoning parser). Either way the reasoning goes to `on_thinking`
and `Response.thinking`, never to `on_token` or `Response.content`.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Answer", "ThinkSplitter"]

_OPEN, _CLOSE = "<think>", "</think>"


class ThinkSplitter:
    """Splits an inline `<think>...</think>` block at the start of a text from the rest, piece
    by piece: `feed` and `end` return `(is_reasoning, text)` pairs in order.

    Text that begins with anything but `<think>` (after whitespace) passes through at once,
    byte-exact; only a start that could still become `<think>` is held back. A block never
    closed is all reasoning (the model stopped while thinking).
    """

    def __init__(self) -> None:
        self._state = "start"  # start -> think -> after -> answer
        self._held = ""

    def feed(self, text: str) -> list[tuple[bool, str]]:
        if self._state == "answer":
            return [(False, text)] if text else []
        self._held += text
        out: list[tuple[bool, str]] = []
        if self._state == "start":
            head = self._held.lstrip()
            if not head or (len(head) < len(_OPEN) and _OPEN.startswith(head)):
                return out  # whitespace, or a start of "<think>": wait for more
            if not head.startswith(_OPEN):
                self._state, text, self._held = "answer", self._held, ""
                return [(False, text)]
            self._state, self._held = "think", head[len(_OPEN) :]
        if self._state == "think":
            end = self._held.find(_CLOSE)
            if end < 0:
                cut = len(self._held) - _partial(self._held)
                ready, self._held = self._held[:cut], self._held[cut:]
                return [(True, ready)] if ready else []
            if end:
                out.append((True, self._held[:end]))
            self._state, self._held = "after", self._held[end + len(_CLOSE) :]
        rest = self._held.lstrip()  # the blank lines between the block and the answer
        if rest:
            self._state, self._held = "answer", ""
            out.append((False, rest))
        else:
            self._held = ""
        return out

    def end(self) -> list[tuple[bool, str]]:
        held, self._held = self._held, ""
        if not held:
            return []
        return [(self._state == "think", held)]


def _partial(text: str) -> int:
    """How many characters at the end of `text` could begin `</think>`."""
    for n in range(min(len(_CLOSE) - 1, len(text)), 0, -1):
        if _CLOSE.startswith(text[-n:]):
            return n
    return 0


class Answer:
    """Collects one answer's text and reasoning as they arrive, passing each piece on."""

    def __init__(
        self,
        on_token: Callable[[str], None] | None = None,
        on_thinking: Callable[[str], None] | None = None,
    ) -> None:
        self._on_token = on_token
        self._on_thinking = on_thinking
        self._split = ThinkSplitter()
        self._text: list[str] = []
        self._reasoning: list[str] = []

    def text(self, piece: str) -> None:
        """A piece of the answer's text, which may open with an inline `<think>` block."""
        self._route(self._split.feed(piece))

    def reasoning(self, piece: str) -> None:
        """A piece of reasoning the server sent apart from the text."""
        self._route([(True, piece)])

    def finish(self) -> tuple[str, str]:
        """The whole answer and the whole reasoning (trimmed)."""
        self._route(self._split.end())
        return "".join(self._text), "".join(self._reasoning).strip()

    def _route(self, pieces: list[tuple[bool, str]]) -> None:
        for is_reasoning, piece in pieces:
            if not piece:
                continue
            if is_reasoning:
                self._reasoning.append(piece)
                if self._on_thinking is not None:
                    self._on_thinking(piece)
            else:
                self._text.append(piece)
                if self._on_token is not None:
                    self._on_token(piece)
