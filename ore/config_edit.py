"""Writing one key of the user's config file (`ore config set`, `ore log on|off`, `ore models
default|alias`): apart from `ore.config`, which reads and settles it on every turn, because
writing is rare, needs `tomlkit` and the atomic write, and keeps the user's comments and layout.

The value is checked by the same functions the reading side uses (`value_problem` through
`_assign`), so `ore config set` refuses exactly what a turn would refuse when the file is read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._fs import atomic_write, exclusive_lock, folder_problem, os_error_words
from .config.file import config_path, home_error, home_unusable, parse, read_text, toml_of
from .config.values import (
    BARE_KEY,
    CONFIG_KEYS,
    TABLES,
    alias_loop,
    loop_words,
    option_value,
    value_problem,
)
from .errors import ConfigError, OptionError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["set_config_value"]


def set_config_value(key: str, value: str) -> Path:
    """Set `key` (`model`, `log`, `options.temperature`, `aliases.fast` ...) to `value` in the
    config file, keeping every other key; an empty `value` removes the key. Only that key's
    line changes (or one is added): the user's comments and layout stay (`_written`). The
    file is written atomically, private (0600), under a lock so two writers never lose each
    other's change; a file that does not read is reported and left as it is.

    :returns: the file's path.
    :raises OptionError: (a usage mistake, exit 2) an unknown key, or a value of the wrong kind.
    :raises ConfigError: the file cannot be read (or is broken), or cannot be written.
    """
    path = config_path()
    head, _, sub = key.partition(".")
    _check_key(key, head, sub)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with exclusive_lock(path.with_name(path.name + ".lock")):
            text = read_text(path)
            data = toml_of(path, text) if text is not None else {}
            _assign(data, head, sub, value, path)
            parse(path, text or "", data)  # the rest of the file: a broken line is named
            blob = _written(path, text or "", data, (head, sub) if sub else (head,))
            parse(path, blob, toml_of(path, blob))  # what is written reads back as meant
            # A file linked from elsewhere (a dotfiles folder) is written where the link points.
            atomic_write(os.path.realpath(path), blob.encode("utf-8"), mode=0o600)
    except OSError as exc:
        if home_unusable(path.parent):  # said as a turn says it of that home
            why = home_error(path.parent, exc)
            raise ConfigError(
                folder_problem(why, path.parent, "write the config file in"), path=path
            ) from exc
        if os.path.islink(path) and not os.path.exists(path):  # a dangling link: say where
            target = os.path.realpath(path)
            raise ConfigError(
                f"cannot write the config file {path}: it is a link to {target}, which cannot "
                f"be written ({os_error_words(exc)}); make {os.path.dirname(target)} or remove "
                "the link",
                path=path,
            ) from exc
        raise ConfigError(
            f"cannot write the config file {path} ({os_error_words(exc)}); "
            f"check that {path.parent} is a writable directory",
            path=path,
        ) from exc
    return path


def _check_key(key: str, head: str, sub: str) -> None:
    """A key `ore config set` takes: one of CONFIG_KEYS, `options.NAME` or `aliases.NAME`."""
    known = [f"{k}.NAME" if k in TABLES else k for k in CONFIG_KEYS]
    if head not in CONFIG_KEYS:
        import difflib

        near = difflib.get_close_matches(head, list(CONFIG_KEYS), n=1, cutoff=0.6)
        hint = f" did you mean {near[0]}?" if near else ""
        raise OptionError(f"unknown config key '{key}';{hint} keys: {', '.join(known)}")
    if head in TABLES and not sub:
        raise OptionError(f"'{head}' is a table: set one entry with '{head}.NAME VALUE'")
    if head not in TABLES and sub:
        raise OptionError(f"'{head}' has no entries: set it with '{head} VALUE'")


def _written(path: Path, text: str, data: dict[str, Any], target: tuple[str, ...]) -> str:
    """The file's new text: `text` with the one key at `target` changed in place by `tomlkit`
    (the library made for editing TOML that people write), so their comments, order and
    alignment stay; written whole from `data` only if the edit would not read back as `data`
    (a layout the editor mangles is never written)."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    value: Any = data
    for name in target:
        value = value.get(name) if isinstance(value, dict) else None
    try:
        document = tomlkit.parse(text)
        table: Any = document
        for name in target[:-1]:
            if name not in table:
                if value is None:
                    return text  # nothing there to remove
                table[name] = tomlkit.table()
            table = table[name]
        if value is None:
            table.pop(target[-1], None)
        else:
            table[target[-1]] = value
        edited = tomlkit.dumps(document).replace("\r\n", "\n")
    except (TOMLKitError, TypeError, ValueError):
        return _dumps(data, path)
    if "\r\n" in text:  # a file written on Windows keeps its line ends, added lines too
        edited = edited.replace("\n", "\r\n")
    try:
        if _filled(toml_of(path, edited)) == _filled(data):
            return edited
    except ConfigError:
        pass
    return _dumps(data, path)


def _filled(data: Mapping[str, Any]) -> dict[str, Any]:
    """`data` without its empty tables (a header left with no entry means no table)."""
    return {k: v for k, v in data.items() if v != {}}


def _assign(data: dict[str, Any], head: str, sub: str, value: str, path: Path) -> None:
    """Put `value` (as typed on a command line) at `head[.sub]` of `data`; '' removes it.

    :raises OptionError: a value every turn would refuse (`value_problem`, the check the file
        gets when it is read), as a usage mistake.
    """
    if head in TABLES:
        table = data.setdefault(head, {})
        if value == "":
            table.pop(sub, None)
            if not table:
                data.pop(head)
            return
        entry = value if head == "aliases" else option_value(value)
        _refuse(value_problem(f"{head}.{sub}", entry))
        table[sub] = entry
        if head == "aliases" and (loop := alias_loop(table)) is not None:
            raise OptionError(loop_words(loop))
        return
    if value == "":
        data.pop(head, None)
        return
    typed: Any = value
    if head == "log":
        lowered = value.strip().lower()
        if lowered not in ("true", "false", "yes", "no", "on", "off", "1", "0"):
            raise OptionError(f"'log' must be true or false, not '{value}'")
        typed = lowered in ("true", "yes", "on", "1")
    elif head == "backend":
        typed = value.strip().lower()
    backend = data.get("backend") if head != "backend" else typed
    _refuse(value_problem(head, typed, backend=backend if isinstance(backend, str) else None))
    data[head] = typed


def _refuse(why: str | None) -> None:
    if why is not None:
        raise OptionError(why)


def _dumps(data: Mapping[str, Any], path: Path) -> str:
    """`data` as TOML: plain keys first, then each table. Only what a Config holds is
    written (strings, numbers, bools, flat lists, two tables), so a small writer does."""
    lines = [f"{_key(k)} = {_value(v, path)}" for k, v in data.items() if not isinstance(v, dict)]
    for name, table in data.items():
        if isinstance(table, dict):
            lines += ["", f"[{_key(name)}]"]
            lines += [f"{_key(k)} = {_value(v, path)}" for k, v in table.items()]
    return "\n".join(lines).lstrip("\n") + "\n"


def _key(key: str) -> str:
    return key if re.match(BARE_KEY, key) else _string(key)


def _value(value: Any, path: Path) -> str:
    import math

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v, path) for v in value) + "]"
    if isinstance(value, dict):  # a table the file wrote inline, written inline again
        return "{" + ", ".join(f"{_key(k)} = {_value(v, path)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise OptionError(
                "the value is not valid text (undecodable bytes); type it again"
            ) from exc
        return _string(value)
    raise ConfigError(f"a {type(value).__name__} cannot be written to {path}", path=path)


def _string(text: str) -> str:
    # JSON's escapes (\" \\ \n \uXXXX for control characters) are TOML's basic-string escapes;
    # DEL is a control character to TOML but not to JSON.
    import json

    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")
