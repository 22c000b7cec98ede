"""Where an Ollama server is: the address the `ollama` client will use for a host, worked out
without importing the client or building a backend, so `--dry-run` can show a destination
cheaply."""

from __future__ import annotations

import os

from ..config import address_problem
from ..errors import ServerUnreachable
from .secrets import without_credentials

__all__ = ["ollama_address"]

_DEFAULT_OLLAMA = "http://127.0.0.1:11434"


def ollama_address(host: str | None = None) -> str:
    """The base URL the `ollama` client will use for `host` (or `OLLAMA_HOST`), for messages.

    Mirrors the client's own parsing: a bare host gets port 11434, a scheme without a port gets
    80 or 443. Whitespace and quotes are trimmed, as the Ollama server does.
    """
    raw = (host if host is not None else os.environ.get("OLLAMA_HOST", "")).strip().strip("\"'")
    if not raw:
        return _DEFAULT_OLLAMA
    if address_problem(raw, "ollama") is not None:  # the config file's check too
        raise _bad_address(host)
    scheme, sep, rest = raw.partition("://")
    if not sep:
        scheme, rest = "http", raw
    hostport, _, path = rest.partition("/")
    if hostport.startswith("["):
        bracket = hostport.find("]")
        name, port = hostport[: bracket + 1], hostport[bracket + 2 :]
    else:
        name, _, port = hostport.rpartition(":") if ":" in hostport else (hostport, "", "")
    if not port:
        port = "11434" if not sep else ("443" if scheme == "https" else "80")
    name = name or "127.0.0.1"
    suffix = f"/{path.rstrip('/')}" if path.strip("/") else ""
    return f"{scheme}://{name}:{port}{suffix}"


def _bad_address(host: str | None) -> ServerUnreachable:
    if host is not None:
        what = f"the Ollama address {without_credentials(host)!r} is not one ORE can use; give it"
    else:
        shown = without_credentials(os.environ.get("OLLAMA_HOST", ""))
        what = f"OLLAMA_HOST={shown!r} is not an address ORE can use; set it"
    return ServerUnreachable(
        f"{what} like 127.0.0.1:11434", address=without_credentials(host or "")
    )
