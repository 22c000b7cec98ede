"""The Agent Skills specification, as ORE applies it to a SKILL.md's frontmatter.

Skills written elsewhere (upstream ORE's, Anthropic's public ones) often bend the specification:
a name with capitals or one that differs from its folder, a description over 1,024 characters,
keys such as `version` or `model`. ORE loads them anyway. Two questions are kept apart:

- `validate_metadata` decides whether a skill can be *used*: it refuses only what is unsafe or
  unreadable (no name, a name that is not a safe folder name, no description) and reads
  everything else leniently, turning stray YAML numbers and lists into the strings they mean.
- `spec_deviations` lists *every* way the frontmatter departs from the specification, for the
  one warning line `--list-skills` prints per skill and for `ore skill validate`.

A skill answers to its `name:`, matched without regard to case, even when that differs from its
folder's name (upstream ORE registered skills by `name:` too); the folder only says where it is.
Pure functions over parsed data: no I/O.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

from ..errors import SkillError
from ..types import SkillMetadata

__all__ = [
    "DESCRIPTION_LIMIT",
    "SAFE_NAME_LIMIT",
    "SPEC_FIELDS",
    "is_safe_name",
    "spec_deviations",
    "validate_metadata",
]

#: The top-level keys the specification allows.
SPEC_FIELDS = ("allowed-tools", "compatibility", "description", "license", "metadata", "name")
#: Upstream ORE's top-level hint list: read, but not a spec field.
UPSTREAM_FIELDS = ("hints",)
DESCRIPTION_LIMIT = 1024
NAME_LIMIT = 64
COMPATIBILITY_LIMIT = 500
#: The longest name ORE accepts at all (the spec's limit is NAME_LIMIT).
SAFE_NAME_LIMIT = 100

_SPEC_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_SHOWN = 80


def is_safe_name(name: str) -> bool:
    """A name fit to be a folder name and a `--skill` value: 1-100 letters, digits, '.', '_'
    and '-', not starting with '.' or '-', without '..'."""
    return len(name) <= SAFE_NAME_LIMIT and ".." not in name and bool(_SAFE_NAME.fullmatch(name))


def validate_metadata(data: Mapping[str, Any], folder: str, path: str = "") -> SkillMetadata:
    """The metadata of a skill whose parsed frontmatter is `data`, read leniently.

    Refused (SkillError naming the field): a missing or unsafe name, a missing or blank
    description. Everything else loads; `spec_deviations` says what departs from the spec.
    Hints come from upstream ORE's top-level `hints` (a list, or one comma-separated string)
    and from `metadata.hints` (comma-separated), in that order, without repeats.
    """
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise SkillError("the field 'name' is missing or not a string")
    if not is_safe_name(name):
        raise SkillError(
            f"invalid name {name[:_SHOWN]!r}: it is not a safe folder name; use 1-"
            f"{SAFE_NAME_LIMIT} letters, digits, '.', '_' and '-', not starting with '.' or '-', "
            "without '..'"
        )
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillError("the field 'description' is missing or empty")
    meta = _metadata_map(data.get("metadata"))
    hints = _hint_list(data.get("hints")) + _hint_list(meta.get("hints", ""))
    return SkillMetadata(
        name=name,
        description=" ".join(description.split()),
        hints=tuple(dict.fromkeys(hints)),
        path=path,
        license=_text_or_none(data.get("license")),
        compatibility=_text_or_none(data.get("compatibility")),
        metadata=meta,
        allowed_tools=_tool_list(data.get("allowed-tools")),
    )


def spec_deviations(data: Mapping[str, Any], folder: str) -> list[str]:
    """Every way the frontmatter `data` of the skill in `folder` departs from the Agent Skills
    specification, one short phrase each, in field order; empty when it conforms."""
    found: list[str] = []
    for key in sorted(str(k) for k in data if k not in SPEC_FIELDS):
        if key in UPSTREAM_FIELDS:
            found.append(
                "the top-level 'hints' list is upstream ORE's, not the spec's: put the hints in "
                'metadata as one comma-separated string (metadata: {hints: "a, b"})'
            )
        else:
            found.append(
                f"unknown top-level field {key[:_SHOWN]!r} (the spec allows "
                f"{', '.join(SPEC_FIELDS)}; put anything else in metadata)"
            )
    found += _name_deviations(data.get("name"), folder)
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        found.append("the required field 'description' is missing or empty")
    elif len(description) > DESCRIPTION_LIMIT:
        found.append(
            f"the description is {len(description)} characters, over the spec's {DESCRIPTION_LIMIT}"
        )
    if "license" in data and not isinstance(data["license"], str):
        found.append("'license' must be a string")
    if "compatibility" in data:
        value = data["compatibility"]
        if not isinstance(value, str) or not 1 <= len(value) <= COMPATIBILITY_LIMIT:
            found.append(f"'compatibility' must be a string of 1-{COMPATIBILITY_LIMIT} characters")
    if "metadata" in data:
        meta = data["metadata"]
        if not isinstance(meta, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in meta.items()
        ):
            found.append("'metadata' must map strings to strings (quote numbers and dates)")
    if "allowed-tools" in data and not isinstance(data["allowed-tools"], str):
        found.append("'allowed-tools' must be one space-separated string, not a list")
    return found


def _name_deviations(name: Any, folder: str) -> list[str]:
    if not isinstance(name, str) or not name:
        return ["the required field 'name' is missing or not a string"]
    shown = repr(name[:_SHOWN])
    found = []
    if len(name) > NAME_LIMIT:
        found.append(f"the name {shown} is {len(name)} characters, over the spec's {NAME_LIMIT}")
    if not _SPEC_NAME.fullmatch(name):
        what = []
        if name != name.lower():
            what.append("capitals")
        if re.search(r"[^A-Za-z0-9-]", name):
            what.append("characters other than letters, digits and '-'")
        if name.startswith("-") or name.endswith("-"):
            what.append("a leading or trailing '-'")
        if "--" in name:
            what.append("'--'")
        found.append(
            f"the name {shown} has {' and '.join(what) or 'a form the spec does not allow'}: "
            "the spec allows lowercase letters, digits and single '-'"
        )
    if name != folder:
        found.append(
            f"the name {shown} does not match its folder {folder[:_SHOWN]!r} "
            f"(ORE calls the skill {shown})"
        )
    return found


def _text(value: Any) -> str:
    """A YAML scalar as the text it was written as (`1.0`, `true`, `2024-01-01`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime.date):
        return value.isoformat()
    return str(value)


def _text_or_none(value: Any) -> str | None:
    return None if value is None else _text(value)


def _metadata_map(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {_text(k): _text(v) for k, v in value.items() if v is not None}


def _hint_list(value: Any) -> list[str]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list):
        return []
    return [h for h in (_text(i).strip() for i in items if i is not None) if h]


def _tool_list(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list):
        return tuple(_text(v) for v in value if v is not None)
    return ()
