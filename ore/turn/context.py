"""A turn's context: the tool, grants, skill and routing it carries.

`plan_context` checks every choice once (the tool exists and its permissions are granted, the
skill exists) before any model is called, so a refusal costs no chat request and a REPL fails
before its first prompt. `gather` then builds each turn's `TurnContext` from that plan: it runs
the tool through the gate, activates the skill and routes the prompt. Routing never grants
anything and never sets a tool argument beyond what the tool marks routable (a routed read-file
gets a path inside the working folder). Text piped on stdin reaches a tool as an argument only
where the tool says it takes it (`Tool.piped_arg`: `codebase`'s snippet, for the ops that
compare code). Nothing here prints: what the caller may show arrives through callbacks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING

from .._frozen import contract
from ..turn_types import RoutingDecision, TurnContext

if TYPE_CHECKING:
    from ..tools import Tool
    from ..types import SkillMetadata

__all__ = ["ContextPlan", "gather", "plan_context"]


@contract
class ContextPlan:
    """What every turn of one invocation gathers: checked, but not yet run."""

    granted: frozenset[str] = frozenset()
    tool: Tool | None = None
    tool_args: Mapping[str, str] = field(default_factory=dict)
    skill: SkillMetadata | None = None
    skill_resources: tuple[str, ...] = ()
    route_threshold: float | None = None  # None: no routing

    @property
    def empty(self) -> bool:
        return not (self.granted or self.tool or self.skill or self.route_threshold is not None)


def plan_context(
    *,
    tool: str | None = None,
    tool_args: Mapping[str, str] | None = None,
    grants: Iterable[str] = (),
    skill: str | None = None,
    skill_resources: Iterable[str] = (),
    route_threshold: float | None = None,
) -> ContextPlan:
    """Check a turn's context choices: the tool by name (refused unless `grants` cover its
    permissions), the skill by name; `route_threshold` turns routing on.

    :raises OreError: an unknown tool or skill, or a permission not granted.
    """
    granted = frozenset(grants)
    if tool is None and skill is None and route_threshold is None and not granted:
        return ContextPlan(skill_resources=tuple(skill_resources))
    from .. import skills
    from ..tools import get_tool
    from ..tools.gate import check

    chosen = None
    if tool is not None:
        chosen = get_tool(tool)
        check(chosen, granted)
    metadata = skills.find_skill(skill) if skill is not None else None
    return ContextPlan(
        granted, chosen, dict(tool_args or {}), metadata, tuple(skill_resources), route_threshold
    )


def gather(
    prompt: str,
    plan: ContextPlan,
    piped: str | None = None,
    *,
    on_routing: Callable[[RoutingDecision], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> TurnContext:
    """The tool results, skills and routing decision of one turn. `piped` is the text read
    from stdin, if any (it is part of `prompt` too). `on_routing` hears the router's decision
    as soon as it is made; `on_warning` hears each skill the catalogue passed over."""
    if plan.empty:
        return TurnContext()
    from .. import skills
    from ..tools import TOOL_REGISTRY
    from ..tools.gate import run_gated

    tool, args = plan.tool, dict(plan.tool_args)
    active = []
    if plan.skill is not None:
        active.append(skills.activate(plan.skill, plan.skill_resources))
    routing = None
    if plan.route_threshold is not None:
        from ..router import route, targets_from

        catalog = skills.discover_skills(warn=on_warning or _ignore)
        targets = targets_from(TOOL_REGISTRY.values(), catalog.skills.values())
        routing = route(prompt, targets, plan.route_threshold, tools=TOOL_REGISTRY)
        if on_routing is not None:
            on_routing(routing)
        chosen = plan.skill.name if plan.skill is not None else None
        if routing.target_type == "skill" and routing.target != chosen:
            active.append(skills.activate(catalog.get(routing.target or "")))
        elif routing.target_type == "tool" and routing.target is not None:
            tool, args = TOOL_REGISTRY[routing.target], dict(routing.args)
    if tool is not None:
        args = args | tool.piped_args(args, piped)
    results = (run_gated(tool, args, plan.granted),) if tool is not None else ()
    return TurnContext(tool_results=tuple(results), skills=tuple(active), routing=routing)


def _ignore(message: str) -> None:
    """A warning nobody asked to hear."""
