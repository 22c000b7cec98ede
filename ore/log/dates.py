"""The dates `ore log list --since` and `ore log prune --before` take: a calendar date or time
in local time (`2026-11-24`, `2026-11-24T09:30`), or an age (`3d`, `12h`, `30m`, `2w`)."""

from __future__ import annotations

import re
import time

__all__ = ["parse_date"]

_AGE = re.compile(r"\s*([0-9]+)\s*([mhdw])\s*")
_SECONDS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_date(text: str, *, now: float | None = None) -> float:
    """Unix seconds for `text`; `ValueError` (with the forms that are understood) otherwise."""
    from datetime import datetime

    age = _AGE.fullmatch(text)
    if age is not None:  # no turn is older than the epoch, and time.localtime needs >= 0
        ago = int(age.group(1)) * _SECONDS[age.group(2)]
        return max(0.0, (time.time() if now is None else now) - ago)
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"{text!r} is not a date: use YYYY-MM-DD, YYYY-MM-DDTHH:MM, or an age such as "
            "3d, 12h, 30m, 2w"
        ) from None
    try:
        return max(0.0, moment.timestamp())  # naive: local time
    except (OverflowError, OSError, ValueError):  # year 1 in a zone east of UTC
        return 0.0
