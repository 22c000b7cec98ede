"""What can name a session: 1-100 of `A-Za-z0-9._-`, not starting with `.`, without `..`, so a
name is never a path elsewhere, never a hidden file (the listing cache, temp files) and never
a session's lock file (`NAME.json.lock`)."""

from __future__ import annotations

from ..errors import StoreError

__all__ = ["MAX_NAME_LENGTH", "is_valid_name", "numbered", "validate_name"]

MAX_NAME_LENGTH = 100
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_VALID_NAME = (
    f"a session name is 1 to {MAX_NAME_LENGTH} letters, digits, '.', '_' or '-', "
    "not starting with '.' and without '..'"
)


def is_valid_name(name: str) -> bool:
    """Whether `name` can name a session."""
    return (
        0 < len(name) <= MAX_NAME_LENGTH
        and not name.startswith(".")
        and ".." not in name
        and _NAME_CHARS.issuperset(name)
    )


def validate_name(name: str) -> str:
    """`name` unchanged when it is a valid session name, else a `StoreError` saying what is valid."""
    if not isinstance(name, str) or not is_valid_name(name):
        shown = repr(name) if len(repr(name)) <= 40 else repr(name)[:37] + "..."
        raise StoreError(f"{shown} is not a valid session name; {_VALID_NAME}")
    return name


def numbered(name: str, number: int) -> str:
    """`NAME-N`, NAME cut so that the whole stays a valid name."""
    suffix = f"-{number}"
    return validate_name(name[: MAX_NAME_LENGTH - len(suffix)].rstrip(".") + suffix)
