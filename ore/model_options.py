"""The model options ORE knows (`-o KEY=VALUE`, and an artifact's recorded `input.options`),
and the one check of a value's type and range that both go through.

A library module (no click, no CLI), so that the command line and a replayed artifact refuse the
same values with the same words: an artifact is data from anywhere, and what it recorded is
sent to the server only if `-o` would have sent it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .errors import OptionError

__all__ = [
    "MODEL_OPTIONS",
    "OTHER_NAMES",
    "check_model_option",
    "check_model_options",
    "unknown_option",
]

#: The largest whole number Ollama reads (Go's 64-bit int): past it the server fails to parse.
_INT64 = 2**63 - 1
#: The model options ORE knows (Ollama's names), as (type, lowest, highest); None is unbounded.
#: `stop` is a string and may be given more than once.
MODEL_OPTIONS: dict[str, tuple[type, float | None, float | None]] = {
    "temperature": (float, 0.0, 2.0),
    "top_p": (float, 0.0, 1.0),
    "top_k": (int, 0, _INT64),
    "min_p": (float, 0.0, 1.0),
    "seed": (int, -_INT64 - 1, _INT64),
    "num_ctx": (int, 1, _INT64),
    "num_predict": (int, -2, _INT64),
    "stop": (str, None, None),
    "repeat_penalty": (float, 0.0, None),
    "presence_penalty": (float, -2.0, 2.0),
    "frequency_penalty": (float, -2.0, 2.0),
}


#: What other tools call the options ORE knows (OpenAI's API, llama.cpp, vLLM, Hugging Face):
#: `-o max_tokens=20` is pointed at ORE's name, never guessed at (one name per option, so a
#: recorded artifact and `--dry-run` show one spelling).
OTHER_NAMES = {
    "max_tokens": "num_predict",
    "max_completion_tokens": "num_predict",
    "max_new_tokens": "num_predict",
    "n_predict": "num_predict",
    "n_ctx": "num_ctx",
    "context_length": "num_ctx",
    "max_model_len": "num_ctx",
    "repetition_penalty": "repeat_penalty",
    "stop_sequences": "stop",
    "random_seed": "seed",
}
#: Fields of an OpenAI request that are flags of ORE's, not model options.
_FLAGS = {
    "response_format": "--schema",
    "json_schema": "--schema",
    "format": "--schema",
    "reasoning_effort": "--think LEVEL",
    "think": "--think or --no-think",
    "stream": "--stream or --no-stream",
    "model": "--model",
    "keep_alive": "--keep-alive",
}


def unknown_option(key: str, shown: str) -> str:
    """The one line for a model option ORE does not know, `shown` as the user gave it
    (`-o max_tokens`): ORE's name when another tool's was used, the flag when it is one of
    ORE's flags, the closest name for a slip, else every known name."""
    folded = key.strip().lower().replace("-", "_")
    if folded in MODEL_OPTIONS:
        return f"{shown} is not an option ORE knows: use {folded} (names are lower case)"
    if folded in OTHER_NAMES:
        return f"{shown} is not an option ORE knows: use {OTHER_NAMES[folded]} (ORE's name for it)"
    if folded in _FLAGS:
        return f"{shown} is not a model option: use {_FLAGS[folded]}"
    import difflib  # only for a mistake: start-up stays cheap

    near = difflib.get_close_matches(folded, list(MODEL_OPTIONS), n=1, cutoff=0.75)
    if near:
        return f"{shown} is not an option ORE knows: did you mean {near[0]}?"
    return f"{shown} is not an option ORE knows; known: {', '.join(sorted(MODEL_OPTIONS))}"


def check_model_option(key: str, number: object, shown: str) -> int | float:
    """`number` as the value of the numeric option `key`, when it has the right type and range.

    `shown` is how the option is named in an error (`-o temperature=5`,
    `the artifact's input.options.temperature`).

    :raises OptionError: for a value that is not a (finite, whole for a whole-number option)
        number, or is out of range, or `num_predict` 0.
    """
    kind, low, high = MODEL_OPTIONS[key]
    what = "a whole number" if kind is int else "a number"
    allowed = (int,) if kind is int else (int, float)
    if isinstance(number, bool) or not isinstance(number, allowed):
        raise OptionError(f"{shown}: {key} must be {what}")
    if kind is float:
        number = float(number)
        if not math.isfinite(number):
            raise OptionError(f"{shown}: {key} must be {what}")
    if (low is not None and number < low) or (high is not None and number > high):
        shown_low, shown_high = (
            f"{v:g}" if kind is float and v is not None else f"{v}" for v in (low, high)
        )
        if high == _INT64 and low is not None and key != "seed":  # name the bound passed
            span = f"at least {shown_low}" if number < low else f"at most {shown_high}"
        elif low is not None and high is not None:
            span = f"between {shown_low} and {shown_high}"
        elif low is not None:
            span = f"at least {shown_low}"
        else:
            span = f"at most {shown_high}"
        raise OptionError(f"{shown}: {key} must be {what} {span}")
    if key == "num_predict" and number == 0:
        raise OptionError(
            f"{shown} would generate nothing: give a limit of 1 or more, "
            "-1 for none or -2 to fill the context"
        )
    return number


def check_model_options(options: object, where: str) -> dict[str, Any]:
    """A mapping of model options (as recorded in JSON: `stop` a list) checked as `-o` checks
    each: a known key, a value of its type and range; returned typed (`stop` as a tuple).

    `where` names the mapping in an error (`the artifact's input.options`).

    :raises OptionError: naming the first key or value that `-o` would refuse.
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise OptionError(f"{where} must be an object of model options")
    checked: dict[str, Any] = {}
    for key, value in options.items():
        shown = f"{where}.{str(key)[:60]}"
        if key not in MODEL_OPTIONS:
            raise OptionError(unknown_option(str(key)[:60], shown))
        if key == "stop":
            checked["stop"] = _stops(value, shown)
        else:
            checked[key] = check_model_option(key, value, shown)
    return checked


def _stops(value: object, shown: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not items:
        raise OptionError(f"{shown}: stop must be a list of texts to stop at")
    if not all(isinstance(item, str) and item for item in items):
        raise OptionError(f"{shown}: stop needs a text to stop at (each a non-empty string)")
    return tuple(items)
