"""The config file, `$ORE_HOME/config.toml`: where it is, read whole and safely (a FIFO, a huge
file, a typo are one line naming the file and the line), and checked key by key into a typed
`Config` through the one check of each value (`ore.config.values`). Only ever read from ORE's
home, never from the working folder: a repository cannot choose the model, the address or
where a key goes. `tomllib` is imported only when there is a file to read."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .._frozen import contract
from .._fs import (
    NotRegularFile,
    folder_problem,
    not_a_folder,
    os_error_words,
    read_regular,
)
from ..errors import ConfigError, HomeUnusable
from ..paths import home_folder, ore_home
from .values import (
    CONFIG_KEYS,
    EMPTY,
    TABLES,
    alias_loop,
    loop_words,
    option_value,
    value_problem,
)

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "MAX_CONFIG_BYTES",
    "Config",
    "config_path",
    "home_error",
    "home_unusable",
    "load_config",
    "log_switch",
    "parse",
    "read_text",
    "toml_of",
]

#: The most a config file may hold: a few lines of settings, never megabytes.
MAX_CONFIG_BYTES = 256 * 1024


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
    options: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    keep_alive: str | None = None
    system: str | None = None
    aliases: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    api_key_env: str | None = None
    log: bool = True
    source: Path | None = None

    def resolve_alias(self, name: str | None) -> str | None:
        """`name` with an alias replaced by its model, through an alias that names another
        (`alias_loop` refuses a loop when the file is read, so the chain ends)."""
        seen = 0
        while name is not None and name in self.aliases and seen <= len(self.aliases):
            name, seen = self.aliases[name], seen + 1
        return name


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

    :param on_unusable_home: when given, a home folder that cannot be read is told to it (why,
        for the caller's one line, which says what it goes on without) and the defaults are
        used: a turn never stops because the home is unusable.
    :raises ConfigError: the file cannot be read, is not TOML, or holds a value of the wrong
        kind; the message names the file and, where it can, the line.
    """
    if ignore:
        return Config()
    path = _config_file()
    try:
        text = read_text(path)
    except HomeUnusable as exc:
        if on_unusable_home is None:
            raise
        on_unusable_home(str(exc))
        return Config()
    if text is None:
        return Config()
    return parse(path, text, toml_of(path, text))


def log_switch() -> bool | None:
    """What the config file says of `log` alone, None when it says nothing (or there is no
    file). Read even under `--no-config`: that sets aside the file's defaults for a turn, never
    a user's `ore log off` (whether what one sends is kept is not a default of the turn).

    :raises ConfigError: the file cannot be read or is not TOML, or `log` is not true or false.
    """
    path = _config_file()
    text = read_text(path)
    if text is None:
        return None
    value = toml_of(path, text).get("log")
    if value is not None and not isinstance(value, bool):
        raise _broken(path, _line_of(text, "log"), "'log' must be true or false")
    return value


def home_unusable(home: str | Path) -> bool:
    """Whether an error opening the config file is the home folder's fault rather than the
    file's: the home is a loop, a file, missing on the way, or cannot be searched."""
    try:
        return not stat.S_ISDIR(os.stat(home).st_mode) or not os.access(home, os.X_OK)
    except OSError:
        return True


def home_error(home: Path, exc: OSError) -> OSError:
    """What is wrong with the home itself (a loop, a file in its place), rather than what the
    write that met it said ("File exists" from making a folder where a file is)."""
    try:
        if not stat.S_ISDIR(os.stat(home).st_mode):
            return not_a_folder()
    except OSError as why:
        return why
    return exc


def read_text(path: str | Path) -> str | None:
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
        if home_unusable(home):
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


def toml_of(path: str | Path, text: str) -> dict[str, Any]:
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


def parse(path: str | Path, text: str, data: dict[str, Any]) -> Config:
    """`data` checked key by key into a `Config`."""
    values: dict[str, Any] = {}
    backend = data.get("backend") if isinstance(data.get("backend"), str) else None
    for key, value in data.items():
        if key not in CONFIG_KEYS:
            raise _broken(
                path, _line_of(text, key), f"unknown key '{key}' (known: {', '.join(CONFIG_KEYS)})"
            )
        if key in TABLES:
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
    if key == "aliases" and (loop := alias_loop(value)) is not None:
        raise _broken(path, _line_of(text, loop[0], after=key), loop_words(loop))
    if key == "options":  # as they are sent (`temperature = "0.2"` is 0.2, as -o reads it)
        from ..model_options import check_model_options

        checked = check_model_options({k: option_value(v) for k, v in value.items()}, key)
        value = {k: list(v) if isinstance(v, tuple) else v for k, v in checked.items()}
    return MappingProxyType(dict(value))


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
