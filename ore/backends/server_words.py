"""A server's own words from an error reply, whichever backend read it: OpenAI's
`{"error": {"message": ...}}`, a bare `{"error": "..."}` (Ollama's), vLLM's `{"message": ...}`,
FastAPI's `{"detail": ...}`, or the text of a body that is not JSON (HTML tags stripped). The
text is returned whole, on one line: the backend scrubs secrets first, then shortens it."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["error_detail", "words_of"]


def words_of(data: Any) -> str:
    """The server's words in a parsed error body (or in the `error` value itself)."""
    message: Any = None
    if isinstance(data, str):
        message = data
    elif isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            message = error.get("message") or error.get("type") or error.get("code")
        elif isinstance(error, str):
            message = error
        if not message:
            message = data.get("message") or data.get("detail")
    if not message:
        message = json.dumps(data, ensure_ascii=False)
    return _collapse(message if isinstance(message, str) else json.dumps(message))


def error_detail(body: bytes | str) -> str:
    """The server's words in an error body as sent (JSON or not)."""
    try:
        return words_of(json.loads(body))
    except (ValueError, RecursionError):
        text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
        if text.lstrip().startswith("<"):
            text = re.sub(r"<[^>]*>", " ", text)
        return _collapse(text) or "no detail"


def _collapse(text: str) -> str:
    """`text` on one line, not cut."""
    return " ".join(text.split())
