"""Which value a turn takes: flag > environment > file > built-in, written once (`settle`); the
CLI, `ore config show` and `--dry-run` all ask it, and `ore.backends.select` reads the
environment's names from `ENVIRONMENT`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from .values import EMPTY

if TYPE_CHECKING:
    from .file import Config

__all__ = ["ENVIRONMENT", "Setting", "Settings", "from_environment", "settle"]

#: The environment variables that set a value, first set wins. The address's depend on the
#: kind of server: OLLAMA_HOST is Ollama's, ORE_BASE_URL and OPENAI_BASE_URL an OpenAI-style
#: server's; a preset (deepseek) takes none (an address meant for another server would get
#: the preset's key).
ENVIRONMENT: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "model": ("ORE_MODEL",),
        "backend": ("ORE_BACKEND",),
        "base_url.ollama": ("OLLAMA_HOST",),
        "base_url.openai": ("ORE_BASE_URL", "OPENAI_BASE_URL"),
    }
)


def from_environment(key: str, env: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """(variable, value) of the first of `ENVIRONMENT[key]` set to something, else None."""
    environ = os.environ if env is None else env
    for name in ENVIRONMENT.get(key, ()):
        value = environ.get(name, "").strip()
        if value:
            return name, value
    return None


class Setting(NamedTuple):
    """One chosen value and where it came from: `origin` is "flag", "environment", "file" or
    "default" (or "artifact", "log": what a chain or `--continue` goes on from); `source` names
    it (`--model`, `ORE_MODEL`, the file's path, "built-in")."""

    value: Any
    origin: str
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "origin": self.origin, "source": self.source}


class Settings(NamedTuple):
    """What a turn uses, each value with its origin (`settle`). A NamedTuple, as `Setting`:
    immutable, and a third of a dataclass's cost to define on every turn's start.

    :param api_key_env: the variable holding the key for the file's address, set only when the
        turn goes to the address the file configured (a key stays bound to its address).
    :param options: the model options sent, merged key by key (a flag's over the file's);
        `each_option` says where each came from.
    """

    model: Setting
    backend: Setting
    base_url: Setting
    keep_alive: Setting
    system: Setting
    options: Setting
    api_key_env: Setting
    each_option: Mapping[str, Setting] = EMPTY

    def to_dict(self) -> dict[str, dict[str, Any]]:
        shown = {name: getattr(self, name).to_dict() for name in self._fields[:-1]}
        shown["options"]["keys"] = {k: v.to_dict() for k, v in self.each_option.items()}
        return shown


_BUILT_IN = Setting(None, "default", "built-in")


def _carried(
    backend: str | None, base_url: str | None, config: Config, environ: Mapping[str, str]
) -> bool:
    """Whether `--continue` goes on on the logged turn's backend. Only its name is in the log,
    never an address: an `openai` turn may have gone to an address an artifact recorded, and
    going on there by name would send the user's key to the built-in address only because an
    artifact once chose it. So `openai` is carried only while the user configures an address
    for it (a flag, `ORE_BASE_URL`, the file's); the hosted services are never an artifact's
    choice (`ore.backends.select.route` refuses them unconfirmed), and Ollama takes no key."""
    name = (backend or "").strip().lower()
    if not name:
        return False
    if name != "openai":
        return True
    from_file = config.base_url if (config.backend or "ollama").lower() == "openai" else None
    return bool(base_url or from_environment("base_url.openai", environ) or from_file)


def settle(
    config: Config,
    *,
    model: str | None = None,
    backend: str | None = None,
    base_url: str | None = None,
    keep_alive: str | None = None,
    system: str | None = None,
    options: Mapping[str, Any] | None = None,
    recorded: str | None = None,
    continued: tuple[str, str | None] | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """The one precedence rule: flag > environment > file > built-in, for every value a turn
    takes from the user's defaults. The keyword arguments are the flags (None: not given);
    `options` the `-o` options, typed; `recorded` the backend of the artifact a replay or
    chain starts from, which the turn goes to when no flag, variable or file names one.
    `continued` is the model and backend of the logged turn `--continue` goes on from: a
    conversation goes on with its model unless `--model` says otherwise (as `llm -c` does, and
    as a chain from an artifact does), and with its backend when nothing names one.

    The model's alias (from the file) is replaced wherever the name came from. The file's
    address belongs to the file's backend (Ollama when it names none): used only when the turn
    goes to that backend, and its `api_key_env` only when the turn goes to that address. Its
    `keep_alive` is Ollama's: left aside (as said in its source) for any other server. Options
    merge key by key, a flag's over the file's.
    """
    environ = os.environ if env is None else env
    file = str(config.source) if config.source is not None else "built-in"

    def pick(flag: Any, flag_name: str, key: str, from_file: Any) -> Setting:
        if flag is not None:
            return Setting(flag, "flag", flag_name)
        found = from_environment(key, environ)
        if found is not None:
            return Setting(found[1], "environment", found[0])
        if from_file is not None:
            return Setting(from_file, "file", file)
        return _BUILT_IN

    if model is None and continued is not None:
        chosen_model = Setting(continued[0], "log", "--continue")
    else:
        chosen_model = pick(model, "--model", "model", config.model)
    if chosen_model.value is not None and chosen_model.value in config.aliases:
        alias = chosen_model.value
        chosen_model = chosen_model._replace(
            value=config.resolve_alias(alias), source=f"{chosen_model.source} (alias {alias})"
        )
    chosen_backend = pick(backend and backend.lower(), "--backend", "backend", config.backend)
    if chosen_backend.value is not None:
        chosen_backend = chosen_backend._replace(value=str(chosen_backend.value).lower())
    elif continued is not None and _carried(continued[1], base_url, config, environ):
        chosen_backend = Setting(str(continued[1]).strip().lower(), "log", "--continue")
    elif recorded:
        chosen_backend = Setting(recorded.strip().lower(), "artifact", "--artifact-in")
    kind = chosen_backend.value or "ollama"
    file_backend = (config.backend or "ollama").lower()
    address = pick(
        base_url,
        "--base-url",
        f"base_url.{kind}",
        config.base_url if file_backend == kind else None,
    )
    key_env = _BUILT_IN
    if config.api_key_env and file_backend == kind and address.origin in ("file", "default"):
        key_env = Setting(config.api_key_env, "file", file)
    kept = config.keep_alive
    if kept is not None and kind != "ollama":
        kept = None
        left = f"built-in ({file}'s keep_alive is Ollama's: left aside for {kind})"
    each = {key: Setting(value, "file", file) for key, value in config.options.items()}
    each.update({key: Setting(value, "flag", "-o") for key, value in (options or {}).items()})
    origins = {setting.origin for setting in each.values()}
    merged = Setting(
        {key: setting.value for key, setting in each.items()},
        origins.pop() if len(origins) == 1 else "flag and file",
        ", ".join(dict.fromkeys(setting.source for setting in each.values())),
    )
    chosen_keep_alive = pick(keep_alive, "--keep-alive", "keep_alive", kept)
    if chosen_keep_alive.origin == "default" and config.keep_alive != kept:
        chosen_keep_alive = chosen_keep_alive._replace(source=left)
    return Settings(
        model=chosen_model,
        backend=chosen_backend,
        base_url=address,
        keep_alive=chosen_keep_alive,
        system=pick(system, "--system", "system", config.system),
        options=merged if each else _BUILT_IN,
        api_key_env=key_env,
        each_option=MappingProxyType(each),
    )
