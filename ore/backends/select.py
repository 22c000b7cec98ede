"""Which backend and which model: pure choices over plain values, made in this one place.

The rules: the backend is `--backend` (ORE_BACKEND), else the artifact's (replayed or chained
from: one rule for both), else Ollama; the address is `--base-url` or the environment, else the
artifact's, which then gets no credential; an artifact cannot choose a built-in address (a
preset's, or openai's default) that would get the user's key: that needs `--backend NAME`; the model is `--model`, else `ORE_MODEL`, else a
preset's own default (`deepseek-chat`), else the server's default (upstream's preference order),
and the server's model list is fetched only when that default is needed.

Presets are the OpenAI-compatible backend with a fixed address, key variable and default model:
`deepseek` (https://api.deepseek.com, `DEEPSEEK_API_KEY`, `deepseek-chat`), as upstream ORE 1.2.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from ..config import from_environment
from ..errors import ArtifactError, NoModels, OreError
from ..turn_types import TurnOptions
from .base import DEFAULT_LIMITS, DEFAULT_TIMEOUT, Backend, Limits

__all__ = [
    "BACKENDS",
    "PREFERRED_MODELS",
    "PRESETS",
    "Preset",
    "Route",
    "backend_name",
    "backend_refusal",
    "choose_backend",
    "choose_model",
    "default_model",
    "destination",
    "model_for",
    "no_models",
    "requested_model",
    "route",
    "speaks_openai",
]


class Preset(NamedTuple):
    """A hosted OpenAI-compatible service: where it is, which variables hold its key (first
    set wins), and its default model."""

    base_url: str
    key_variables: tuple[str, ...]
    default_model: str


#: `--backend NAME` presets of the OpenAI-compatible backend. The key is never taken from
#: OPENAI_API_KEY here: that is a key for OpenAI, and must not be sent to another company.
PRESETS: Mapping[str, Preset] = {
    "deepseek": Preset(
        "https://api.deepseek.com", ("DEEPSEEK_API_KEY", "ORE_API_KEY"), "deepseek-chat"
    ),
}

#: Every `--backend` value.
BACKENDS = ("ollama", "openai", *PRESETS)

#: Upstream's preference order for the default model, matched on the name before ':'.
PREFERRED_MODELS = ("llama3.2", "llama3.1", "llama3", "mistral", "llama2", "qwen2.5")


def requested_model(flag: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """The model the user named: `--model`, else `ORE_MODEL`, else None (the CLI has already
    put the config file's model, aliases resolved, in `flag`: `ore.config.settle`)."""
    found = from_environment("model", env)
    return flag or (found[1] if found else None)


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
    """The model to use: `requested_model`, else the default of `available`."""
    explicit = requested_model(requested, env)
    if explicit:
        return explicit
    chosen = default_model(available or ())
    if chosen is None:
        raise no_models(address, backend)
    return chosen


def model_for(flag: str | None, backend: Backend, env: Mapping[str, str] | None = None) -> str:
    """`choose_model` for a live backend: its model list is fetched only when needed (never for
    a preset with a default model)."""
    if not requested_model(flag, env) and backend.default_model:
        return backend.default_model
    available = None if requested_model(flag, env) else backend.list_models()
    return choose_model(flag, available, address=backend.address, backend=backend.name, env=env)


def backend_name(name: str | None = None, recorded_name: str | None = None) -> str:
    """The kind of server a turn goes to: `name` (--backend, ORE_BACKEND), else the artifact's
    (replayed or chained from), else "ollama". Known before anything is built or asked."""
    chosen = (name or recorded_name or "ollama").lower()
    return chosen if chosen == "openai" or chosen in PRESETS else "ollama"


def speaks_openai(name: str) -> bool:
    """Whether the backend `name` speaks the OpenAI protocol (openai and its presets)."""
    return name == "openai" or name in PRESETS


def backend_refusal(name: str, options: TurnOptions) -> str | None:
    """Why the backend `name` cannot honour `options` (e.g. `num_ctx` on an OpenAI-compatible
    server), or None; asked before any request, so a refusal costs none."""
    from .ollama import OllamaBackend
    from .openai import OpenAIBackend

    kind: type[OllamaBackend] | type[OpenAIBackend] = (
        OpenAIBackend if speaks_openai(name) else OllamaBackend
    )
    return kind.refusal(options)


class Route(NamedTuple):
    """Where a turn goes, before anything is built: the backend, the address to build it with
    (None: the backend's own, from the environment or its default), and whether credentials
    may go there (False for an address that came from an artifact alone)."""

    backend: str
    url: str | None
    trusted: bool


def route(
    name: str | None = None,
    base_url: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    recorded_name: str | None = None,
    recorded_url: str | None = None,
) -> Route:
    """The one rule for where a turn goes (see `choose_backend`), asking nothing.

    :raises ArtifactError: when an artifact (replayed or chained from) asks for a backend the
        user's flags and environment do not allow: a preset (a hosted service), or `openai`
        with neither a recorded address nor one the user configured. A key is only ever sent
        where the user sent it, never to a built-in address an artifact chose.
    """
    environ = os.environ if env is None else env
    from_env = from_environment("backend", environ)
    named = (name or (from_env[1] if from_env else "")).strip() or None
    chosen = backend_name(named, recorded_name)
    recorded = (recorded_name or "").strip().lower()
    fallback = recorded_url if recorded == chosen and recorded_url else None
    by_artifact = named is None and recorded == chosen and chosen != "ollama"
    flag = base_url.strip() if base_url and base_url.strip() else None
    if chosen in PRESETS:
        if by_artifact:
            raise _unconfirmed(chosen, f"at {PRESETS[chosen].base_url}")
        return Route(chosen, flag or PRESETS[chosen].base_url, True)
    if chosen == "openai":
        configured = flag or next(
            (v.strip() for v in _openai_addresses(environ) if v and v.strip()), None
        )
        if configured:
            return Route(chosen, configured, True)
        if fallback:
            return Route(chosen, fallback, False)
        if by_artifact:
            from .openai import DEFAULT_BASE_URL

            raise _unconfirmed(chosen, f"with no address; the default is {DEFAULT_BASE_URL}")
        return Route(chosen, None, True)
    if flag:
        return Route(chosen, flag, True)
    if fallback and not environ.get("OLLAMA_HOST", "").strip():
        return Route(chosen, fallback, False)
    return Route(chosen, None, True)


def _openai_addresses(env: Mapping[str, str]) -> tuple[str | None, ...]:
    found = from_environment("base_url.openai", env)
    return (found[1] if found else None,)


def _unconfirmed(name: str, where: str) -> ArtifactError:
    """An artifact asked for a server the user's flags and environment do not choose."""
    return ArtifactError(
        f"the artifact asks for backend '{name}' ({where}), which your flags and environment "
        f"do not choose; nothing was sent: confirm it with --backend {name}"
    )


def destination(
    name: str | None = None,
    base_url: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    recorded_name: str | None = None,
    recorded_url: str | None = None,
) -> dict[str, str]:
    """Where a turn would go, fit to print (`--dry-run`): the backend and its address, without
    user, password, query or fragment. Nothing is built or asked.

    :raises ArtifactError: as `route`.
    """
    from .secrets import sanitize_url, without_credentials

    environ = os.environ if env is None else env
    chosen = route(
        name, base_url, env=environ, recorded_name=recorded_name, recorded_url=recorded_url
    )
    if speaks_openai(chosen.backend):
        from .openai import DEFAULT_BASE_URL

        raw = (chosen.url or DEFAULT_BASE_URL).strip().strip("\"'")
        address = sanitize_url(raw if "://" in raw else f"http://{raw}")
    else:
        from ..errors import OreError
        from .address import ollama_address

        host = chosen.url if chosen.url is not None else environ.get("OLLAMA_HOST", "")
        try:
            address = sanitize_url(ollama_address(host))
        except OreError:
            address = without_credentials(host)
    return {"backend": chosen.backend, "address": address}


def choose_backend(
    name: str | None = None,
    base_url: str | None = None,
    *,
    timeout: float | None = None,
    limits: Limits = DEFAULT_LIMITS,
    env: Mapping[str, str] | None = None,
    recorded_name: str | None = None,
    recorded_url: str | None = None,
    key_env: str | None = None,
) -> Backend:
    """The model server: `name` (--backend, else ORE_BACKEND), at `base_url` (--base-url) if
    given.

    For openai the address falls back to ORE_BASE_URL, then OPENAI_BASE_URL; the key comes from
    ORE_API_KEY or OPENAI_API_KEY only (a flag would leave it in shell history and `ps`).
    `recorded_*` (the backend of an artifact replayed or chained from: one rule for both,
    `route`) fill in only what flags and environment leave unset, and no credential (an API
    key, `OLLAMA_API_KEY`, `~/.netrc`) is ever sent to an address that came from an artifact
    alone: an artifact is untrusted data, and must not be able to send a credential to a
    server of its choice. Nor can it choose a built-in address that would get one: an artifact
    naming a preset (`deepseek`), or `openai` with no address, is refused (`ArtifactError`)
    unless `--backend` confirms it.

    :param key_env: the variable holding the key for this address (the config file's
        `api_key_env`, passed only when the turn goes to the address the file configured);
        it replaces the built-in key variables.
    :raises OreError: a preset (`deepseek`) with no key: one line naming the variable to set,
        before any request.
    """
    environ = os.environ if env is None else env
    seconds = timeout or DEFAULT_TIMEOUT
    chosen = route(
        name, base_url, env=environ, recorded_name=recorded_name, recorded_url=recorded_url
    )
    if chosen.backend in PRESETS:
        preset = PRESETS[chosen.backend]
        if key_env:
            preset = preset._replace(key_variables=(key_env,))
        return _preset(chosen.backend, preset, chosen.url, seconds, environ, limits)
    if chosen.backend != "openai":
        from .ollama import OllamaBackend

        return OllamaBackend(chosen.url, timeout=seconds, limits=limits, trusted=chosen.trusted)
    from .openai import OpenAIBackend, resolve_base_url

    if not chosen.trusted and chosen.url is not None:
        return OpenAIBackend(chosen.url, None, timeout=seconds, limits=limits, trusted=False)
    variables = (key_env,) if key_env else ("ORE_API_KEY", "OPENAI_API_KEY")
    key = next((environ[v].strip() for v in variables if environ.get(v, "").strip()), None)
    address = resolve_base_url(chosen.url, environ)
    return OpenAIBackend(address, key, timeout=seconds, limits=limits, key_variables=variables)


def _preset(
    name: str,
    preset: Preset,
    base_url: str | None,
    seconds: float,
    env: Mapping[str, str],
    limits: Limits,
) -> Backend:
    """A preset: `--base-url` or its own address (never one from the environment's
    ORE_BASE_URL, meant for another server, nor from an artifact), its key variables."""
    from .openai import OpenAIBackend

    key = next((env[v].strip() for v in preset.key_variables if env.get(v, "").strip()), None)
    if key is None:
        raise OreError(
            f"--backend {name} needs an API key and none is set: put yours in "
            f"{' or '.join(preset.key_variables)} (e.g. export {preset.key_variables[0]}=...)"
        )
    return OpenAIBackend(
        base_url or preset.base_url,
        key,
        timeout=seconds,
        limits=limits,
        name=name,
        default_model=preset.default_model,
        key_variables=preset.key_variables,
    )
