"""The listings: sessions, models, tools and skills, each through `ore.cli.tables.emit_table`
(a table at a terminal, header-free TSV in a pipe, a JSON array with `--json`).

One session listing: `--list-sessions` and `ore session list` are the same function.
"""

from __future__ import annotations

from .console import warn
from .options import Options
from .tables import emit_table

__all__ = ["list_models", "list_sessions", "list_skills", "list_tools"]

#: `ore session list` and `--list-sessions`: these columns, in this order (TSV has no header).
SESSION_COLUMNS = ("Name", "Turns", "Model", "Last used", "First prompt")


def list_sessions(as_json: bool = False) -> None:
    """Every saved session, the one used last first: name, turns, model last used, last use,
    first prompt; an unreadable one as `unreadable`, with why in place of the first prompt."""
    from ..sessions import list_sessions as summaries_of
    from ..sessions import session_store, when

    summaries = summaries_of(session_store())
    rows = []
    for s in summaries:
        if s.problem is not None:
            rows.append((s.name, "unreadable", "-", when(s.modified), s.problem))
        else:
            turns = f"{s.turns} turn" + ("" if s.turns == 1 else "s")
            rows.append((s.name, turns, s.model or "-", when(s.modified), s.first_prompt or ""))
    emit_table(
        SESSION_COLUMNS,
        rows,
        as_json=as_json,
        records=[s.to_dict() for s in summaries],
        empty='no saved sessions; start one with ore --save-session NAME "your question"',
    )


def list_models(o: Options) -> None:
    """The server's models, the one a turn would use marked `(default)`: the model named by
    flag, environment or config file (`ore.config.settle`), else the server's best."""
    from ..turn import available_models
    from .request import server_of

    models, chosen = available_models(server_of(o))
    chosen = o.model or chosen  # -m, ORE_MODEL or the config file's (aliases resolved) wins
    # Ollama reads a name without a tag as NAME:latest, and lists it so.
    tagged = f"{chosen}:latest" if chosen and ":" not in chosen else chosen
    marked = [name in (chosen, tagged) for name in models]
    emit_table(
        ("Name", "Default"),
        [(name, "(default)" if mark else "") for name, mark in zip(models, marked, strict=True)],
        as_json=o.as_json,
        records=[
            {"name": name, "default": mark} for name, mark in zip(models, marked, strict=True)
        ],
        empty="the server has no models; pull one first (ollama pull NAME)",
    )


def list_tools(as_json: bool = False) -> None:
    """One row per tool: name, the permissions it needs (or none), description."""
    from ..tools import TOOL_REGISTRY

    tools = [TOOL_REGISTRY[name] for name in sorted(TOOL_REGISTRY)]
    emit_table(
        ("Name", "Permissions", "Description"),
        [(t.name, ",".join(t.permissions) or "none", t.description) for t in tools],
        as_json=as_json,
        records=[
            {"name": t.name, "permissions": list(t.permissions), "description": t.description}
            for t in tools
        ],
    )


def list_skills(as_json: bool = False) -> None:
    """One row per skill (name, description), from frontmatter only. On stderr: one warning
    line per refused skill, and one per usable skill that departs from the Agent Skills spec."""
    from ..skills import discover_skills, skill_roots

    catalog = discover_skills(warn=warn)
    for name, found in catalog.deviations.items():
        path = catalog.skills[name].path
        warn(
            f"skill '{name}' ({path}) departs from the Agent Skills spec: {'; '.join(found)} "
            f"(it still works; details: ore skill validate {path})"
        )
    skills = list(catalog.skills.values())
    emit_table(
        ("Name", "Description"),
        [(meta.name, meta.description) for meta in skills],
        as_json=as_json,
        records=[
            {"name": m.name, "description": m.description, "path": str(m.path)} for m in skills
        ],
        empty="no skills found in " + ", ".join(str(r) for r in skill_roots()),
    )
