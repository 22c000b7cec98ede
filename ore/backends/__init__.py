"""Model servers, modelled on httpx's transports: a base (`base`), one module per kind of server
(`ollama`, `openai`), and the one place that picks the backend and the model (`select`).

Importing this package is cheap: each backend imports its HTTP client only when it is built.
"""

from __future__ import annotations

from .base import DEFAULT_LIMITS, DEFAULT_TIMEOUT, Backend, BackendReasoner, Limits
from .ollama import OllamaBackend, ollama_address
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
