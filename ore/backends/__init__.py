"""Model servers, modelled on httpx's transports: a base (`base`), one module per kind of server
(`ollama`, `openai`), and the one place that picks the backend and the model (`select`).

Names are imported on first use (PEP 562, through `ore._lazy`), so `--dry-run`, which only asks
`select` which model was named, pays for no backend module; each backend imports its HTTP client
only when built. Type checkers see the real types through the imports under `TYPE_CHECKING`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from .address import ollama_address
    from .base import DEFAULT_LIMITS, DEFAULT_TIMEOUT, Backend, BackendReasoner, Limits
    from .ollama import OllamaBackend
    from .openai import OpenAIBackend
    from .select import (
        backend_name,
        backend_refusal,
        choose_backend,
        choose_model,
        default_model,
        model_for,
        requested_model,
    )

__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_TIMEOUT",
    "Backend",
    "BackendReasoner",
    "Limits",
    "OllamaBackend",
    "OpenAIBackend",
    "backend_name",
    "backend_refusal",
    "choose_backend",
    "choose_model",
    "default_model",
    "model_for",
    "ollama_address",
    "requested_model",
]

if not TYPE_CHECKING:  # type checkers see the imports above, and no catch-all __getattr__
    __getattr__, __dir__ = exports(
        __name__,
        {
            "DEFAULT_LIMITS": ".base",
            "DEFAULT_TIMEOUT": ".base",
            "Backend": ".base",
            "BackendReasoner": ".base",
            "Limits": ".base",
            "OllamaBackend": ".ollama",
            "ollama_address": ".address",
            "OpenAIBackend": ".openai",
            "backend_name": ".select",
            "backend_refusal": ".select",
            "choose_backend": ".select",
            "choose_model": ".select",
            "default_model": ".select",
            "model_for": ".select",
            "requested_model": ".select",
        },
    )
