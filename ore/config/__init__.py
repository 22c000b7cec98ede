"""The user's own defaults: `$ORE_HOME/config.toml`, read and written in this one place.

Why a package of its own: the file is untrusted input like any other on disk (a FIFO, a huge
file, a typo), so it is read once, checked once, and every value reaches the rest of ORE as a
typed `Config`. It names the environment variable that holds a key (`api_key_env`), never a
key.

- `values`: what each value may be, the one check per value (`value_problem`;
  `address_problem` for an address, which the backends ask too), so a value every turn would
  refuse is named by its file and line when read, and refused by `ore config set`;
- `precedence`: which value wins (flag > environment > file > built-in), in `settle`, the one
  place that rule is written;
- `file`: where the file is, reading and checking it (`load_config`, `log_switch`).

Writing the file (`ore config set`) is `ore.config_edit`. Imports only the standard library
and ORE's leaves, and `tomllib` only when there is a file to read, so a command that needs no
config pays nothing; names load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from .file import MAX_CONFIG_BYTES, Config, config_path, load_config, log_switch
    from .precedence import ENVIRONMENT, Setting, Settings, from_environment, settle
    from .values import (
        BACKEND_NAMES,
        CONFIG_KEYS,
        KEEP_ALIVE_HINT,
        address_problem,
        keep_alive_value,
        value_problem,
    )

__all__ = [
    "BACKEND_NAMES",
    "CONFIG_KEYS",
    "ENVIRONMENT",
    "KEEP_ALIVE_HINT",
    "MAX_CONFIG_BYTES",
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

if not TYPE_CHECKING:  # type checkers see the imports above
    __getattr__, __dir__ = exports(
        __name__,
        {
            "MAX_CONFIG_BYTES": ".file",
            "Config": ".file",
            "config_path": ".file",
            "load_config": ".file",
            "log_switch": ".file",
            "ENVIRONMENT": ".precedence",
            "Setting": ".precedence",
            "Settings": ".precedence",
            "from_environment": ".precedence",
            "settle": ".precedence",
            "BACKEND_NAMES": ".values",
            "CONFIG_KEYS": ".values",
            "KEEP_ALIVE_HINT": ".values",
            "address_problem": ".values",
            "keep_alive_value": ".values",
            "value_problem": ".values",
        },
    )
