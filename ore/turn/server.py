"""The server a turn talks to: the backend a `Server` names, the model, what the kind of server
can send, and its model list. Choices only (`ore.backends.select` holds the rules); nothing is
sent until a reasoner is called."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .request import Server

if TYPE_CHECKING:
    from ..backends import Backend
    from ..turn_types import TurnOptions

__all__ = [
    "available_models",
    "backend_kind",
    "choose_model",
    "close",
    "connect",
    "refusal",
    "requested_model",
]


def connect(server: Server | None = None) -> Backend:
    """The backend `server` names (unset values from the environment); nothing is sent yet."""
    server = server if server is not None else Server()
    from ..backends import DEFAULT_LIMITS, Limits, choose_backend

    name, url = server.recorded if server.recorded is not None else (None, None)
    limits = Limits(
        max_seconds=server.max_seconds or DEFAULT_LIMITS.max_seconds,
        max_bytes=server.max_bytes or DEFAULT_LIMITS.max_bytes,
    )
    return choose_backend(
        server.backend,
        server.base_url,
        timeout=server.timeout,
        limits=limits,
        recorded_name=name,
        recorded_url=url,
        key_env=server.key_env,
    )


def choose_model(model: str | None, backend: Backend) -> str:
    """`model`, else ORE_MODEL, else the backend's default (its model list asked only then)."""
    from ..backends import model_for

    return model_for(model, backend)


def available_models(server: Server | None = None) -> tuple[list[str], str | None]:
    """The server's models and the one a turn would pick by default.

    :raises NoModels: when the server has none.
    """
    from ..backends.select import default_model, no_models

    backend = connect(server)
    try:
        models = backend.list_models()
    finally:
        close(backend)
    if not models:
        raise no_models(backend.address, backend.name)
    return models, default_model(models)


def refusal(kind: str, controls: TurnOptions) -> str | None:
    """Why the kind of server `kind` (`backend_kind`) cannot honour `controls` (e.g. `num_ctx`
    on an OpenAI-compatible server), or None; known before anything is built or asked."""
    from ..backends.select import backend_refusal

    return backend_refusal(kind, controls)


def backend_kind(server: Server) -> str:
    """The kind of server a turn goes to ("ollama", "openai", a preset), asking nothing."""
    from ..backends.select import backend_name

    return backend_name(server.backend, server.recorded[0] if server.recorded else None)


def requested_model(model: str | None) -> str | None:
    """The model the caller named, or ORE_MODEL; None when only the server could say."""
    from ..backends.select import requested_model as named

    return named(model)


def close(backend: Backend) -> None:
    """Close the backend's connections (a backend built by `connect` holds an HTTP client)."""
    closer = getattr(backend, "close", None)
    if closer is not None:
        closer()
