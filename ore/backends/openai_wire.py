"""The OpenAI-compatible wire: the request body of one turn, and reading what the server sends
(JSON replies, server-sent event streams and error bodies, whose text is returned whole: the
backend scrubs secrets, then shortens it). Pure, no I/O: faults are raised as the private
signals below, which `ore.backends.openai` classifies into `ModelError`s.
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..turn_types import TurnOptions
from ..types import Message, Response, Usage, count_of
from .base import answered
from .server_words import error_detail, words_of

if TYPE_CHECKING:
    import httpx

__all__ = [
    "BadReply",
    "ClosedEmpty",
    "Dropped",
    "Reply",
    "ServerSaid",
    "StatusError",
    "check_status",
    "error_detail",
    "loads_event",
    "refusal",
    "refuses_json_schema",
    "request_body",
    "sse_data",
]

#: Model options by Ollama's name -> the OpenAI field. The standard fields, and `top_k`, `min_p`
#: and `repeat_penalty`, which llama.cpp's server, vLLM and LM Studio read as extensions.
_OPTION_FIELDS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "seed": "seed",
    "num_predict": "max_tokens",
    "stop": "stop",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "top_k": "top_k",
    "min_p": "min_p",
    "repeat_penalty": "repeat_penalty",
}


# -- the request ---------------------------------------------------------------------------------


def refusal(options: TurnOptions) -> str | None:
    """Why an OpenAI-compatible server cannot be sent `options`, or None."""
    for key in options.options:
        if key == "num_ctx":
            return (
                "-o num_ctx cannot be sent to an OpenAI-compatible server: its context size is "
                "set when it starts (llama-server -c N, vllm --max-model-len N)"
            )
        if key not in _OPTION_FIELDS:
            return f"-o {key} cannot be sent to an OpenAI-compatible server"
    predict = options.options.get("num_predict")
    if isinstance(predict, int) and predict < 1:
        return "-o num_predict must be 1 or more for an OpenAI-compatible server (max_tokens)"
    if options.keep_alive is not None:
        return (
            "--keep-alive is Ollama's; an OpenAI-compatible server keeps its model loaded by "
            "its own settings"
        )
    if options.think is True:
        return (
            "--think without a level cannot be sent to an OpenAI-compatible server: give one "
            "(--think low|medium|high; sent as reasoning_effort)"
        )
    return None


def request_body(
    model_id: str,
    messages: Sequence[Message],
    options: TurnOptions,
    *,
    stream: bool,
    json_object: bool = False,
) -> dict[str, Any]:
    """The `POST /chat/completions` body of one turn; only the fields `options` sets are added,
    so a plain turn's body is `model`, `messages`, `stream` (and `stream_options`).

    `json_object`: for a server that takes no `json_schema` (llama-cpp-python's), a `--schema`
    turn asks for `json_object` and gives the schema in the system message instead; the answer
    is checked against the schema as ever."""
    wire: list[dict[str, Any]] = [{"role": m.role, "content": m.content} for m in messages]
    if options.schema is not None and json_object:
        wire = _with_schema(wire, options.schema)
    if options.images:
        parts: list[dict[str, Any]] = [{"type": "text", "text": wire[-1]["content"]}]
        for image in options.images:
            data = base64.b64encode(image.data).decode("ascii")
            url = f"data:{image.media_type};base64,{data}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
        wire[-1]["content"] = parts
    body: dict[str, Any] = {"model": model_id, "messages": wire, "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    for key, value in options.options.items():
        body[_OPTION_FIELDS[key]] = list(value) if isinstance(value, tuple) else value
    if options.schema is not None and json_object:
        body["response_format"] = {"type": "json_object"}
    elif options.schema is not None:
        schema = {"name": "answer", "schema": dict(options.schema)}
        body["response_format"] = {"type": "json_schema", "json_schema": schema}
    if options.think is not None:
        body["reasoning_effort"] = "none" if options.think is False else options.think
    return body


def _with_schema(wire: list[dict[str, Any]], schema: Mapping[str, Any]) -> list[dict[str, Any]]:
    """`wire` with the schema said in its system message (one is added when there is none)."""
    said = (
        "Answer with one JSON object, and nothing else, that follows this JSON Schema:\n"
        + json.dumps(dict(schema), ensure_ascii=False)
    )
    if wire and wire[0]["role"] == "system":
        return [{**wire[0], "content": f"{wire[0]['content']}\n\n{said}"}, *wire[1:]]
    return [{"role": "system", "content": said}, *wire]


#: What a server that takes no `json_schema` response format says when it gets one: llama.cpp's
#: older server ('response_format type must be one of "text" or "json_object", but got:
#: json_schema'), llama-cpp-python's validation of the request, and the like.
_NO_JSON_SCHEMA = re.compile(r"json_schema|response_format|json_object", re.IGNORECASE)


def refuses_json_schema(status: int, body: bytes) -> bool:
    """Whether an error reply is the server refusing the `json_schema` response format (before
    it generated anything: the request was refused as it arrived)."""
    return status in (400, 422, 500, 501) and bool(_NO_JSON_SCHEMA.search(error_detail(body)))


# -- reading replies -----------------------------------------------------------------------------


class Reply:
    """What one turn's reply said besides its text: model, finish reason, usage, timings."""

    def __init__(self, backend: str = "openai") -> None:
        self.backend = backend
        self.started = time.perf_counter()  # a Reply is made just before its request
        self.model: str | None = None
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] = {}
        self.timings: dict[str, Any] = {}
        self.thinking = ""
        self.done = False
        self.seen = False

    def _take_common(self, data: dict[str, Any]) -> None:
        if data.get("error"):
            raise ServerSaid(words_of(data))
        self.seen = True
        if isinstance(data.get("model"), str) and data["model"]:
            self.model = data["model"]
        if isinstance(data.get("usage"), dict):
            self.usage = data["usage"]
        if isinstance(data.get("timings"), dict):  # llama-server's own extension
            self.timings = data["timings"]

    def take_completion(self, data: Any) -> str:
        if not isinstance(data, dict):
            raise BadReply("a reply that is not a JSON object")
        self._take_common(data)
        choice = _first_choice(data)
        if choice is None:
            raise BadReply("a reply with no choices")
        message = choice.get("message")
        if not isinstance(message, dict):
            raise BadReply("a choice with no message")
        self._take_finish(choice)
        self.thinking = _reasoning(message)
        content = message.get("content")
        return content if isinstance(content, str) else ""

    def take_chunk(self, data: dict[str, Any]) -> Iterator[tuple[bool, str]]:
        """`(is_reasoning, text)` for what one event carries."""
        self._take_common(data)
        choice = _first_choice(data)  # the usage chunk has "choices": []
        if choice is None:
            return
        delta = choice.get("delta")
        if delta is not None and not isinstance(delta, dict):
            raise BadReply("a chunk whose delta is not an object")
        reasoning = _reasoning(delta or {})
        if reasoning:
            yield True, reasoning
        content = (delta or {}).get("content")
        if isinstance(content, str) and content:  # the role-only first chunk has none
            yield False, content
        self._take_finish(choice)

    def _take_finish(self, choice: dict[str, Any]) -> None:
        if isinstance(choice.get("finish_reason"), str) and choice["finish_reason"]:
            self.finish_reason = choice["finish_reason"]

    def counts(self) -> Usage:
        """The reply's `usage` and finish reason; durations come only from llama-server's
        `timings` (milliseconds, made nanoseconds as Ollama counts them)."""
        return Usage(
            tokens_in=count_of(self.usage.get("prompt_tokens")),
            tokens_out=count_of(self.usage.get("completion_tokens")),
            total_tokens=count_of(self.usage.get("total_tokens")),
            prompt_ns=count_of(self.timings.get("prompt_ms"), 1_000_000),
            eval_ns=count_of(self.timings.get("predicted_ms"), 1_000_000),
            finish_reason=self.finish_reason,
        )

    def response(self, content: str, thinking: str, model_id: str) -> Response:
        return answered(
            self.backend,
            self.counts(),
            self.started,
            content=content,
            thinking=thinking,
            model_id=self.model or model_id,
        )


def _reasoning(message: Mapping[str, Any]) -> str:
    """The reasoning a message or delta carries: `reasoning_content` (llama.cpp, vLLM, DeepSeek)
    or `reasoning` (Ollama's /v1, OpenRouter)."""
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _first_choice(data: dict[str, Any]) -> dict[str, Any] | None:
    choices = data.get("choices")
    if choices is None:
        return None
    if not isinstance(choices, list):
        raise BadReply("'choices' that is not a list")
    for choice in choices:
        if not isinstance(choice, dict):
            raise BadReply("a choice that is not an object")
        if choice.get("index", 0) == 0:
            return choice
    return None


def sse_data(lines: Iterable[str]) -> Iterator[str]:
    """The data of each server-sent event; comments (keep-alives) and other fields skipped."""
    data: list[str] = []
    lines = _without_bom(iter(lines))
    for line in lines:
        if not line:
            if data:
                yield "\n".join(data)
                data = []
            continue
        if line.startswith(":"):
            continue
        field, sep, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
        elif field not in ("event", "id", "retry") or not sep:
            raise BadReply("a stream line that is not a server-sent event")
    if data:
        yield "\n".join(data)


def _without_bom(lines: Iterator[str]) -> Iterator[str]:
    """`lines` without the byte order mark a stream may open with (the SSE spec drops it)."""
    first = next(lines, None)
    if first is None:
        return
    yield first.removeprefix("\ufeff")
    yield from lines


def loads_event(data: str) -> dict[str, Any]:
    try:
        chunk = json.loads(data)
    except ValueError:
        raise BadReply("an event whose data is not JSON") from None
    except RecursionError:
        raise BadReply("an event nested too deeply to read") from None
    if not isinstance(chunk, dict):
        raise BadReply("an event that is not a JSON object")
    return chunk


# -- signals: faults found in a reply, classified by the backend ---------------------------------


class StatusError(Exception):
    def __init__(self, status: int, body: bytes, route: str, headers: Mapping[str, str]) -> None:
        super().__init__(status)
        self.status = status
        self.body = body
        self.route = route
        self.retry_after = headers.get("retry-after", "")
        self.location = headers.get("location", "")


class BadReply(Exception):
    """The reply does not follow the protocol; `what` says how, in a few words."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class ServerSaid(Exception):
    """The server put an error object in a 200 reply or in the middle of a stream."""


class Dropped(Exception):
    """The stream ended with neither `[DONE]` nor a finish reason."""


class ClosedEmpty(Exception):
    """The event stream was opened and closed without one event of the answer (at most
    `[DONE]`): llama.cpp's server does this for a prompt over its context window."""


def check_status(response: httpx.Response, route: str) -> None:
    if response.status_code >= 300:
        raise StatusError(response.status_code, response.content, route, response.headers)
