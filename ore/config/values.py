"""What each value of the user's defaults may be: the one check per value (`value_problem`,
`address_problem`, `keep_alive_value`), asked by the config file as it is read, by `ore config
set` and by the turn alike, so a value set is a value a turn takes. Imports only the standard
library (and `ore.model_options` for an option, when one is checked)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ..errors import OptionError

__all__ = [
    "BACKEND_NAMES",
    "BARE_KEY",
    "CONFIG_KEYS",
    "EMPTY",
    "KEEP_ALIVE_HINT",
    "TABLES",
    "address_problem",
    "alias_loop",
    "keep_alive_value",
    "loop_words",
    "option_value",
    "value_problem",
]

#: Every top-level key, with what it holds (for messages and `ore config show`).
CONFIG_KEYS: Mapping[str, str] = MappingProxyType(
    {
        "model": "the default model (a name or an alias)",
        "backend": "ollama, openai or deepseek",
        "base_url": "the model server's address",
        "keep_alive": "how long the server keeps the model loaded (e.g. 5m)",
        "system": "the system prompt ('' for none)",
        "api_key_env": "the NAME of the environment variable holding the key",
        "log": "whether turns are logged (true or false)",
        "options": "a table of default -o options (temperature = 0.2 ...)",
        "aliases": 'a table of model aliases (fast = "llama3.2:1b" ...)',
    }
)
#: Every backend a turn can go to (`ore.backends.select.BACKENDS`, spelled out here so that
#: checking a name imports no backend).
BACKEND_NAMES = ("ollama", "openai", "deepseek")
_STRINGS = ("model", "backend", "base_url", "keep_alive", "system", "api_key_env")
TABLES = ("options", "aliases")
#: An environment variable's name, and a key TOML takes bare (compiled on first use: `re`
#: caches them, and a turn with a well-formed file never asks).
_ENV_NAME = r"[A-Za-z_][A-Za-z0-9_]*\Z"
BARE_KEY = r"[A-Za-z0-9_-]+\Z"
#: A Go duration as Ollama takes it for keep_alive (`5m`, `1h30m`, `-1m`).
_DURATION = r"-?(?:[0-9]+(?:\.[0-9]+)?(?:ns|us|µs|ms|s|m|h))+"
#: An empty mapping no one can change: the default of every table.
EMPTY: Mapping[str, Any] = MappingProxyType({})


def keep_alive_value(text: str) -> str | int | None:
    """A keep-alive as Ollama takes it: whole seconds (sent as a number) or a Go duration
    (`5m`, `1h30m`); None when `text` is neither. `--keep-alive`, the file's `keep_alive` and
    `ore config set keep_alive` all ask this."""
    text = text.strip()
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    return text if re.fullmatch(_DURATION, text) else None


#: Why a keep-alive is refused, after what was given.
KEEP_ALIVE_HINT = (
    "is not a duration: use seconds (0 unloads after the answer, -1 keeps the model loaded) "
    "or a duration such as 5m or 1h30m"
)


def address_problem(raw: str, kind: str = "ollama") -> str | None:
    """Why `raw` is not an address a turn to a `kind` server could use, or None. The one
    check: the backends refuse what it refuses (`ore.backends.address`, `ore.backends.openai`),
    and so do the config file and `ore config set`, so a value set is a value a turn takes.

    Ollama's (as its client reads a host): a bare host or `http(s)://host[:port][/path]`, no
    host meaning 127.0.0.1; an OpenAI-style server's: an http(s) URL with a host.
    """
    text = raw.strip().strip("\"'")
    if kind in BACKEND_NAMES[1:]:
        from urllib.parse import urlsplit

        url = text if "://" in text else f"http://{text}"
        hostport = url.partition("://")[2].partition("/")[0].rpartition("@")[2]
        bracketed = _bracket_problem(hostport)
        if bracketed is not None:
            return bracketed
        if not hostport.startswith("[") and hostport.count(":") > 1:
            return _UNBRACKETED
        if any(ch.isspace() for ch in hostport):
            return "its host holds a space"
        try:
            parts = urlsplit(url)
            number = parts.port
        except ValueError:
            return "its port is not a number from 1 to 65535"
        if number == 0:
            return "its port is not a number from 1 to 65535"
        if parts.scheme.lower() not in ("http", "https"):
            return "it is not an http:// or https:// address"
        return None if parts.hostname else "it names no host"
    if not text:
        return None
    scheme, sep, rest = text.partition("://")
    if sep and scheme.lower() not in ("http", "https"):  # the client speaks HTTP only
        return "it is not an http:// or https:// address"
    hostport = (rest if sep else text).partition("/")[0].rpartition("@")[2]  # no user:password
    bracketed = _bracket_problem(hostport)
    if bracketed is not None:
        return bracketed
    if any(ch.isspace() for ch in hostport):
        return "its host holds a space"
    if hostport.startswith("["):
        port = hostport[hostport.find("]") + 2 :]
    elif hostport.count(":") > 1:  # `::1`, `:::`: which colon starts the port is anyone's guess
        return _UNBRACKETED
    else:
        port = hostport.rpartition(":")[2] if ":" in hostport else ""
    if port and (not port.isdigit() or not 0 < int(port) < 65536):
        return "its port is not a number from 1 to 65535"
    return None


#: An IPv6 address written bare (`::1`): which colon starts the port is anyone's guess.
_UNBRACKETED = "an IPv6 address goes in brackets, as [::1]:11434"


def _bracket_problem(hostport: str) -> str | None:
    """What is wrong with an IPv6 host in brackets (`[::1]:11434`), or None (or no brackets)."""
    if not hostport.startswith("["):
        return None
    end = hostport.find("]")
    if end < 0:
        return "its IPv6 address lacks the closing ]"
    if hostport[end + 1 :] and not hostport[end + 1 :].startswith(":"):
        return "only :PORT may follow an IPv6 address in brackets"
    import ipaddress

    try:
        ipaddress.IPv6Address(hostport[1:end].partition("%")[0])
    except ValueError:
        return "what is in brackets is not an IPv6 address"
    return None


def value_problem(key: str, value: Any, *, backend: str | None = None) -> str | None:
    """Why every turn would refuse `value` for the config key `key` (`options.NAME` for an
    option), or None. The one check of a value, for the file as it is read (then named by its
    file and line) and for `ore config set` (then a usage mistake); `backend` is the file's,
    whose server the file's `base_url` is for."""
    head, _, name = key.partition(".")
    if head in _STRINGS and not isinstance(value, str):
        return f"'{head}' must be a string"
    if head == "backend" and value.strip().lower() not in BACKEND_NAMES:
        return f"backend '{value}' is not one of {', '.join(BACKEND_NAMES)}"
    if head == "base_url":
        why = address_problem(value, (backend or "ollama").strip().lower())
        return f"base_url '{value}' is not an address ORE can use: {why}" if why else None
    if head == "keep_alive" and keep_alive_value(value) is None:
        return f"keep_alive '{value}' {KEEP_ALIVE_HINT}"
    if head == "api_key_env" and not re.match(_ENV_NAME, value):
        return (
            "'api_key_env' takes the NAME of an environment variable (e.g. DEEPSEEK_API_KEY), "
            "never a key: put the key in that variable"
        )
    if head == "log" and not isinstance(value, bool):
        return "'log' must be true or false"
    if head == "aliases" and name and not isinstance(value, str):
        return f"alias '{name}' must name a model"
    if head == "options" and name:
        from ..model_options import check_model_options

        if not _scalar_or_list(value):
            return f"option '{name}' must be a number, string or bool"
        try:
            check_model_options({name: option_value(value)}, "options")
        except OptionError as exc:
            return exc.message
    return None


def alias_loop(aliases: Mapping[str, Any]) -> tuple[str, str] | None:
    """(an alias, its chain) when following aliases from it comes back to it, else None."""
    for start in aliases:
        chain, name = [start], aliases[start]
        while name in aliases and name not in chain:
            chain.append(name)
            name = aliases[name]
        if name == start:
            return start, " -> ".join([*chain, start])
    return None


def loop_words(found: tuple[str, str]) -> str:
    return f"alias '{found[0]}' loops ({found[1]}): point one of them at a model"


def _scalar_or_list(value: Any) -> bool:
    if isinstance(value, list):
        return all(isinstance(v, (str, int, float, bool)) for v in value)
    return isinstance(value, (str, int, float, bool))


def option_value(value: Any) -> Any:
    """A `-o` style value: a number or bool when it reads as one, else the text (a value
    that is not text, as TOML typed it, is kept)."""
    if not isinstance(value, str):
        return value
    import tomllib

    try:
        parsed = tomllib.loads(f"v = {value}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError):
        return value
    return parsed if _scalar_or_list(parsed) else value
