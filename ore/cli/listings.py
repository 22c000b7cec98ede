"""The listing commands: sessions, models, tools and skills, one line each on stdout."""

from __future__ import annotations

from .console import note, out, visible, warn
from .options import Options

__all__ = ["list_models", "list_sessions", "list_skills", "list_tools"]


def list_sessions() -> None:
    """One line per saved session: name, message count, id (or why it cannot be read)."""
    from ..sessions import saved_sessions

    infos = saved_sessions()
    if not infos:
        note("no saved sessions")
        return
    for info in infos:
        if info.problem is not None:
            out(f"{visible(info.name)}\tunreadable: {visible(info.problem)}")
        else:
            out(f"{visible(info.name)}\t{info.message_count} messages\t{visible(info.id or '')}")


def list_models(o: Options) -> None:
    """The server's models, the one ORE would pick marked `(default)`."""
    from ..turn import available_models
    from .request import server_of

    models, chosen = available_models(server_of(o))
    for name in models:
        out(visible(name) + ("\t(default)" if name == chosen else ""))


def list_tools() -> None:
    """One line per tool: name, the permissions it needs (or none), description."""
    from ..tools import TOOL_REGISTRY

    for name in sorted(TOOL_REGISTRY):
        tool = TOOL_REGISTRY[name]
        out(f"{name}\t{','.join(tool.permissions) or 'none'}\t{visible(tool.description)}")


def list_skills() -> None:
    """One line per skill (name, description), from frontmatter only. On stderr: one warning
    line per refused skill, and one per usable skill that departs from the Agent Skills spec."""
    from ..skills import discover_skills, skill_roots

    catalog = discover_skills(warn=warn)
    if not catalog.skills:
        note("no skills found in " + ", ".join(str(r) for r in skill_roots()))
    for name, found in catalog.deviations.items():
        path = catalog.skills[name].path
        warn(
            f"skill '{name}' ({path}) departs from the Agent Skills spec: {'; '.join(found)} "
            f"(it still works; details: ore skill validate {path})"
        )
    for meta in catalog.skills.values():
        out(f"{visible(meta.name)}\t{visible(meta.description)}")
