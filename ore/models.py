"""Model discovery and default selection: pure functions over a backend's model list."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from .errors import NoModels

__all__ = ["PREFERRED_MODELS", "choose_model", "default_model", "no_models"]

#: Upstream's preference order for the default model, matched on the name before ':'.
PREFERRED_MODELS = ("llama3.2", "llama3.1", "llama3", "mistral", "llama2", "qwen2.5")


def default_model(available: Sequence[str]) -> str | None:
    """The first of PREFERRED_MODELS the server has (by base name), else its first model."""
    bases = [name.split(":", 1)[0] for name in available]
    for preferred in PREFERRED_MODELS:
        if preferred in bases:
            return available[bases.index(preferred)]
    return available[0] if available else None


def no_models(address: str, backend: str = "ollama") -> NoModels:
    """The error for a server with no models, saying how to get one on that kind of server."""
    if backend == "ollama":
        how = "install one, e.g. 'ollama pull llama3.2'"
    else:
        how = "load one on the server (e.g. 'llama-server -m model.gguf') or name it with --model"
    return NoModels(f"the server at {address} has no models; {how}")


def choose_model(
    requested: str | None,
    available: Sequence[str] | None,
    *,
    address: str,
    backend: str = "ollama",
    env: Mapping[str, str] | None = None,
) -> str:
    """The model to use: `--model`, else `ORE_MODEL`, else the default of `available`.

    `available` is only needed (and only fetched by the caller) when neither is set.
    """
    environ = os.environ if env is None else env
    explicit = requested or environ.get("ORE_MODEL", "").strip()
    if explicit:
        return explicit
    chosen = default_model(available or ())
    if chosen is None:
        raise no_models(address, backend)
    return chosen
