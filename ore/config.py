"""The user's own defaults: `$ORE_HOME/config.toml`, read and written in this one place.

Why a module of its own: the file is untrusted input like any other on disk (a FIFO, a huge
file, a typo), so it is read once, checked once, and every value reaches the rest of ORE as a
typed `Config`. Each value is checked by the one function a turn's check is
(`value_problem`; `address_problem` for an address, which the backends ask too), so a value
every turn would refuse is named by its file and line when read, and refused by
`ore config set`. It is only ever read from ORE's home, never from the working folder: a
repository cannot choose the model, the address or where a key goes. It names the environment
variable that holds a key (`api_key_env`), never a key.

Which value wins (flag > environment > file > built-in) is decided here too, in `settle`, the
one place that rule is written: the CLI, `ore config show` and `--dry-run` all ask it, and
`ore.backends.select` reads the environment's names from `ENVIRONMENT`. Imports only the standard library and ORE's leaves, and
`tomllib` only when there is a file to read, so a command that needs no config pays nothing.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from ._frozen import contract
from ._fs import (
    NotRegularFile,
    folder_problem,
    not_a_folder,
    os_error_words,
    read_regular,
)
from .errors import ConfigError, HomeUnusable, OptionError
from .paths import home_folder, ore_home

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "BACKEND_NAMES",
    "CONFIG_KEYS",
    "ENVIRONMENT",
    "Config",
    "Setting",
    "Settings",
    "address_problem",
    "config_path",
    "from_environment",
    "keep_alive_value",
    "load_config",
    "log_switch",
    "settle",
    "value_problem",
]

#: The most a config file may hold: a few lines of settings, never megabytes.
MAX_CONFIG_BYTES = 256 * 1024

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
_TABLES = ("options", "aliases")
#: An environment variable's name, and a key TOML takes bare (compiled on first use: `re`
#: caches them, and a turn with a well-formed file never asks).
_ENV_NAME = r"[A-Za-z_][A-Za-z0-9_]*\Z"
_BARE_KEY = r"[A-Za-z0-9_-]+\Z"
#: A Go duration as Ollama takes it for keep_alive (`5m`, `1h30m`, `-1m`).
_DURATION = r"-?(?:[0-9]+(?:\.[0-9]+)?(?:ns|us|µs|ms|s|m|h))+"
_EMPTY: Mapping[str, Any] = MappingProxyType({})


@contract
class Config:
    """What the config file says; None (or empty) where it says nothing.

    :param options: default turn controls, as `-o KEY=VALUE` would give them (checked where
        the turn's controls are checked, like any `-o`).
    :param aliases: model names by alias (`fast` -> `llama3.2:1b`).
    :param api_key_env: the name of the environment variable holding the key for the
        configured address, never a key.
    :param log: whether turns are logged (the turn log reads it).
    :param source: the file these values came from; None when there was none (or it was
        ignored with `--no-config`).
    """

    model: str | None = None
    backend: str | None = None
    base_url: str | None = None
    options: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    keep_alive: str | None = None
    system: str | None = None
    aliases: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    api_key_env: str | None = None
    log: bool = True
    source: Path | None = None

    def resolve_alias(self, name: str | None) -> str | None:
        """`name` with an alias replaced by its model, through an alias that names another
        (`_alias_loop` refuses a loop when the file is read, so the chain ends)."""
        seen = 0
        while name is not None and name in self.aliases and seen <= len(self.aliases):
            name, seen = self.aliases[name], seen + 1
        return name


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
    "default"; `source` names it (`--model`, `ORE_MODEL`, the file's path, "built-in")."""

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
    each_option: Mapping[str, Setting] = _EMPTY

    def to_dict(self) -> dict[str, dict[str, Any]]:
        shown = {name: getattr(self, name).to_dict() for name in self._fields[:-1]}
        shown["options"]["keys"] = {k: v.to_dict() for k, v in self.each_option.items()}
        return shown


_BUILT_IN = Setting(None, "default", "built-in")


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
    env: Mapping[str, str] | None = None,
) -> Settings:
    """The one precedence rule: flag > environment > file > built-in, for every value a turn
    takes from the user's defaults. The keyword arguments are the flags (None: not given);
    `options` the `-o` options, typed; `recorded` the backend of the artifact a replay or
    chain starts from, which the turn goes to when no flag, variable or file names one.

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

    chosen_model = pick(model, "--model", "model", config.model)
    if chosen_model.value is not None and chosen_model.value in config.aliases:
        alias = chosen_model.value
        chosen_model = chosen_model._replace(
            value=config.resolve_alias(alias), source=f"{chosen_model.source} (alias {alias})"
        )
    chosen_backend = pick(backend and backend.lower(), "--backend", "backend", config.backend)
    if chosen_backend.value is not None:
        chosen_backend = chosen_backend._replace(value=str(chosen_backend.value).lower())
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


# -- checking: one function per value, for the file, `ore config set` and the turn alike -------


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

        try:
            parts = urlsplit(text if "://" in text else f"http://{text}")
            parts.port  # noqa: B018 - raises ValueError for a port that is not a number
        except ValueError:
            return "its port is not a number from 1 to 65535"
        if parts.scheme.lower() not in ("http", "https"):
            return "it is not an http:// or https:// address"
        return None if parts.hostname else "it names no host"
    if not text:
        return None
    scheme, sep, rest = text.partition("://")
    if sep and scheme.lower() not in ("http", "https"):  # the client speaks HTTP only
        return "it is not an http:// or https:// address"
    hostport = (rest if sep else text).partition("/")[0]
    if hostport.startswith("["):
        port = hostport[hostport.find("]") + 2 :]
    else:
        port = hostport.rpartition(":")[2] if ":" in hostport else ""
    if port and (not port.isdigit() or not 0 < int(port) < 65536):
        return "its port is not a number from 1 to 65535"
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
        from .model_options import check_model_options

        if not _scalar_or_list(value):
            return f"option '{name}' must be a number, string or bool"
        try:
            check_model_options({name: _option_value(value)}, "options")
        except OptionError as exc:
            return exc.message
    return None


def _alias_loop(aliases: Mapping[str, Any]) -> tuple[str, str] | None:
    """(an alias, its chain) when following aliases from it comes back to it, else None."""
    for start in aliases:
        chain, name = [start], aliases[start]
        while name in aliases and name not in chain:
            chain.append(name)
            name = aliases[name]
        if name == start:
            return start, " -> ".join([*chain, start])
    return None


def _loop_words(found: tuple[str, str]) -> str:
    return f"alias '{found[0]}' loops ({found[1]}): point one of them at a model"


def config_path() -> Path:
    """Where the config file is: `$ORE_HOME/config.toml`. Nothing is read or created."""
    return ore_home() / "config.toml"


def _config_file() -> str:
    """`config_path()` as text: a turn's start looks for the file without importing `pathlib`
    (see `ore.paths.home_folder`)."""
    return os.path.join(home_folder(), "config.toml")


def load_config(
    *, ignore: bool = False, on_unusable_home: Callable[[str], object] | None = None
) -> Config:
    """The config file's values; defaults when there is no file, or `ignore` (`--no-config`).

    :param on_unusable_home: when given, a home folder that cannot be read is told to it (one
        line) and the defaults are used: a turn never stops because the home is unusable.
    :raises ConfigError: the file cannot be read, is not TOML, or holds a value of the wrong
        kind; the message names the file and, where it can, the line.
    """
    if ignore:
        return Config()
    path = _config_file()
    try:
        text = _read_text(path)
    except HomeUnusable as exc:
        if on_unusable_home is None:
            raise
        on_unusable_home(f"{exc}; going on without the config file")
        return Config()
    if text is None:
        return Config()
    return _parse(path, text, _toml(path, text))


def log_switch() -> bool | None:
    """What the config file says of `log` alone, None when it says nothing (or there is no
    file). Read even under `--no-config`: that sets aside the file's defaults for a turn, never
    a user's `ore log off` (whether what one sends is kept is not a default of the turn).

    :raises ConfigError: the file cannot be read or is not TOML, or `log` is not true or false.
    """
    path = _config_file()
    text = _read_text(path)
    if text is None:
        return None
    value = _toml(path, text).get("log")
    if value is not None and not isinstance(value, bool):
        raise _broken(path, _line_of(text, "log"), "'log' must be true or false")
    return value


# -- reading -------------------------------------------------------------------------------------


def _home_unusable(home: str | Path) -> bool:
    """Whether an error opening the config file is the home folder's fault rather than the
    file's: the home is a loop, a file, missing on the way, or cannot be searched."""
    try:
        return not stat.S_ISDIR(os.stat(home).st_mode) or not os.access(home, os.X_OK)
    except OSError:
        return True


def _home_error(home: Path, exc: OSError) -> OSError:
    """What is wrong with the home itself (a loop, a file in its place), rather than what the
    write that met it said ("File exists" from making a folder where a file is)."""
    try:
        if not stat.S_ISDIR(os.stat(home).st_mode):
            return not_a_folder()
    except OSError as why:
        return why
    return exc


def _read_text(path: str | Path) -> str | None:
    """The file's text, or None when there is no file. A FIFO or device is refused, never
    waited on; a symlink is followed (dotfiles managers link config files)."""
    try:
        data = read_regular(path, limit=MAX_CONFIG_BYTES, follow_symlinks=True)
    except FileNotFoundError:
        return None
    except NotRegularFile as exc:
        raise ConfigError(
            f"the config file {path} {os_error_words(exc)}; make it a file or remove it", path=path
        ) from exc
    except OSError as exc:
        home = os.path.dirname(path)
        if _home_unusable(home):
            raise HomeUnusable(folder_problem(exc, home, "read ORE's home"), path=path) from exc
        raise ConfigError(
            f"the config file {path} cannot be read ({os_error_words(exc)}); "
            "fix its permissions, or run with --no-config",
            path=path,
        ) from exc
    if len(data) > MAX_CONFIG_BYTES:
        raise _broken(path, None, f"it is larger than {MAX_CONFIG_BYTES >> 10} KiB")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise _broken(path, line, "it is not UTF-8 text") from exc


def _toml(path: str | Path, text: str) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib says "Invalid value (at line 3, column 9)": the line is in its words.
        found = re.search(r"at line (\d+)", str(exc))
        words = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc)) or "invalid TOML"
        raise _broken(path, int(found.group(1)) if found else None, words) from exc
    except RecursionError as exc:  # arrays nested thousands deep
        raise _broken(path, None, "it is nested too deeply") from exc


def _parse(path: str | Path, text: str, data: dict[str, Any]) -> Config:
    """`data` checked key by key into a `Config`."""
    values: dict[str, Any] = {}
    backend = data.get("backend") if isinstance(data.get("backend"), str) else None
    for key, value in data.items():
        if key not in CONFIG_KEYS:
            raise _broken(
                path, _line_of(text, key), f"unknown key '{key}' (known: {', '.join(CONFIG_KEYS)})"
            )
        if key in _TABLES:
            values[key] = _table(path, text, key, value)
            continue
        why = value_problem(key, value, backend=backend)
        if why is not None:
            raise _broken(path, _line_of(text, key), why)
        values[key] = value
    if "backend" in values:
        values["backend"] = values["backend"].strip().lower()
    from pathlib import Path  # a file was read: only then is pathlib worth its import

    return Config(**values, source=Path(path))


def _table(path: str | Path, text: str, key: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise _broken(path, _line_of(text, key), f"'{key}' must be a table ([{key}])")
    for name, item in value.items():
        why = value_problem(f"{key}.{name}", item)
        if why is not None:
            raise _broken(path, _line_of(text, name, after=key), why)
    if key == "aliases" and (loop := _alias_loop(value)) is not None:
        raise _broken(path, _line_of(text, loop[0], after=key), _loop_words(loop))
    if key == "options":  # as they are sent (`temperature = "0.2"` is 0.2, as -o reads it)
        from .model_options import check_model_options

        checked = check_model_options({k: _option_value(v) for k, v in value.items()}, key)
        value = {k: list(v) if isinstance(v, tuple) else v for k, v in checked.items()}
    return MappingProxyType(dict(value))


def _scalar_or_list(value: Any) -> bool:
    if isinstance(value, list):
        return all(isinstance(v, (str, int, float, bool)) for v in value)
    return isinstance(value, (str, int, float, bool))


def _line_of(text: str, key: str, after: str | None = None) -> int | None:
    """The line where `key` is set or opened as a table (in the table `after` opens, when
    given), for the message; None if not found."""
    start = 0
    if after is not None:
        opened = re.search(rf"^[ \t]*\[[ \t]*[\"']?{re.escape(after)}[\"']?[ \t]*\]", text, re.M)
        start = opened.end() if opened else 0
    pattern = re.compile(
        rf"^[ \t]*(?:\[[ \t]*)?[\"']?{re.escape(key)}[\"']?\s*(?:=|\])", re.MULTILINE
    )
    found = pattern.search(text, start) or pattern.search(text)
    return text.count("\n", 0, found.start()) + 1 if found else None


def _broken(path: str | Path, line: int | None, why: str) -> ConfigError:
    where = f"{path}, line {line}" if line else str(path)
    return ConfigError(
        f"config file {where}: {why}; fix it (ore config edit) or run with --no-config",
        path=path,
        line=line,
    )


def _option_value(value: Any) -> Any:
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
