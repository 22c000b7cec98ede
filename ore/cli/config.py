"""`ore config ...`: the user's defaults in `$ORE_HOME/config.toml`, shown with where each value
comes from, set one key at a time, or edited whole. `path` and `edit` work on a broken file
(that is when they are needed); `show` and `set` name its broken line."""

from __future__ import annotations

import os
from typing import Any

import click

from .console import note, out, reported, visible
from .help import CONTEXT_SETTINGS

__all__ = ["config"]


@click.group(name="config", context_settings=CONTEXT_SETTINGS)
def config() -> None:
    """Your defaults (model, backend, address, options, aliases ...) in $ORE_HOME/config.toml.

    Which value wins: a flag, then the environment, then this file, then ORE's built-in.

    \b
    Examples:
      ore config set model llama3.2
      ore config set aliases.fast llama3.2:1b     # then: ore -m fast "q"
      ore config set options.temperature 0.2
      ore config show
    """


@config.command(name="show")
@click.option("--json", "-j", "as_json", is_flag=True, help="One JSON object on stdout.")
@click.option("--no-config", is_flag=True, help="Show what applies without the file.")
def show(as_json: bool, no_config: bool) -> None:
    """Each value a turn would use, with where it comes from (environment, file, default)."""
    from ..config import load_config, settle

    with reported():
        loaded = load_config(ignore=no_config)
        found = settle(loaded)
        rows = _rows(found.to_dict(), loaded.aliases, str(loaded.source or "built-in"))
        rows.insert(len(found.to_dict()), {"key": "log", **_log_row()})
    if as_json:
        from .tables import emit_table

        emit_table(("Key", "Value", "Origin", "Source"), [], as_json=True, records=rows)
        return
    from .tables import emit_table

    emit_table(
        ("Key", "Value", "Origin", "Source"),
        [(r["key"], _shown(r["value"]), r["origin"], r["source"]) for r in rows],
    )


def _log_row() -> dict[str, Any]:
    """The log switch, which holds under --no-config too (`ore log status` says the rule): a
    file that cannot be read then keeps turns out of the log, and is shown so."""
    from ..config import config_path, log_switch
    from ..errors import ConfigError, HomeUnusable

    try:
        said = log_switch()
    except HomeUnusable:  # no file can be read there, nor a log written: as a turn sees it
        said = None
    except ConfigError:  # only under --no-config: else the file's whole read said it first
        return {"value": False, "origin": "file", "source": f"{config_path()} (cannot be read)"}
    if said is None:
        return {"value": True, "origin": "default", "source": "built-in"}
    return {"value": said, "origin": "file", "source": str(config_path())}


def _rows(settings: dict[str, dict[str, Any]], aliases: Any, source: str) -> list[dict[str, Any]]:
    rows = [{"key": key, **value} for key, value in settings.items()]
    for row in rows:
        row.pop("keys", None)  # each option's origin: all the file's here (no -o)
    for row in rows:
        if row["key"] == "base_url" and isinstance(row["value"], str):
            row["value"] = _public(row["value"])
    rows += [
        {"key": f"aliases.{name}", "value": model, "origin": "file", "source": source}
        for name, model in aliases.items()
    ]
    return rows


def _public(url: str) -> str:
    """An address fit to print: no user, password, query or fragment (a key may ride in any)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        netloc += f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(an address that cannot be parsed)"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _shown(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return str(value)


@config.command(name="set")
@click.argument("key")
@click.argument("value")
def set_value(key: str, value: str) -> None:
    """Set KEY to VALUE (KEY: model, backend, base_url, keep_alive, system, api_key_env, log,
    options.NAME, aliases.NAME); an empty VALUE ('') removes the key. Other keys are kept."""
    from ..config import load_config, settle
    from ..config_edit import set_config_value

    # A value every turn would refuse is refused (exit 2) by the check the file gets when it
    # is read (`ore.config.value_problem`), so `set` never writes a file that stops a turn.
    with reported():
        path = set_config_value(key, value)
        found = settle(load_config())
    out(visible(f"{key} set in {path}" if value else f"{key} removed from {path}"))
    left = found.keep_alive
    if key in ("keep_alive", "backend") and left.origin == "default" and left.source != "built-in":
        note(
            f"keep_alive is Ollama's: turns to {found.backend.value} leave it aside "
            "(it applies with --backend ollama)"
        )


@config.command(name="path")
def path() -> None:
    """Print where the config file is (whether or not it exists)."""
    from ..config import config_path

    out(visible(str(config_path())))


@config.command(name="edit")
def edit() -> None:
    """Open the config file in $VISUAL or $EDITOR (vi if neither is set), then check it."""
    import shlex
    import subprocess

    from ..config import config_path, load_config
    from ..errors import OreError

    where = config_path()
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with reported():
        try:
            where.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not where.exists():
                from .._fs import atomic_write

                atomic_write(where, b"# ORE's defaults: see 'ore config --help'\n", mode=0o600)
            code = subprocess.call([*shlex.split(editor), str(where)])
        except (OSError, ValueError) as exc:
            raise OreError(
                f"cannot open {where} in '{editor}' ({exc}); set VISUAL or EDITOR to an editor"
            ) from exc
        if code != 0:
            raise OreError(f"the editor '{editor}' exited with {code}; the file is as it left it")
        load_config()  # a mistake is one line naming its line, now rather than at the next turn
