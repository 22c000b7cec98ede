"""A turn's context from the command line: the tool, grants, skill and routing the flags ask for.

`plan_context` checks every flag once (grants, tool arguments, the gate, the skill) before any
model is called, so a refusal costs no chat request and a REPL fails before its first prompt.
`gather` then builds each turn's `TurnContext` from that plan: it runs the tool, activates the
skill and routes the prompt. Routing never grants anything and never sets a tool argument
beyond what the tool marks routable (a routed read-file gets a path inside the working folder).
Text piped on stdin reaches a tool as an argument only where the tool says it takes it
(`Tool.piped_arg`: `codebase`'s snippet, for the ops that compare code).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..turn_types import TurnContext
from .console import note, warn
from .options import Options, parse_grants, parse_tool_args

if TYPE_CHECKING:
    from ..tools import Tool
    from ..types import SkillMetadata

__all__ = ["ContextPlan", "gather", "plan_context"]


@dataclass(frozen=True, slots=True)
class ContextPlan:
    """What every turn of one invocation gathers: checked, but not yet run."""

    granted: frozenset[str] = frozenset()
    tool: Tool | None = None
    tool_args: dict[str, str] = field(default_factory=dict)
    skill: SkillMetadata | None = None
    skill_resources: tuple[str, ...] = ()
    route_threshold: float | None = None  # None: no routing

    @property
    def empty(self) -> bool:
        return not (self.granted or self.tool or self.skill or self.route_threshold is not None)


def plan_context(o: Options) -> ContextPlan:
    """Check the context flags of `o` (exit 2 for a malformed one, 1 for a refusal)."""
    if not (o.tool or o.skill or o.route or o.grant or o.skill_resource):
        return ContextPlan()  # a plain turn: nothing to check, nothing more to import
    from .. import skills
    from ..tools import get_tool
    from ..tools.gate import check

    granted = parse_grants(o.grant)
    tool, args = None, {}
    if o.tool is not None:
        args = parse_tool_args(o.tool_arg)
        tool = get_tool(o.tool)
        check(tool, granted)
    skill = skills.find_skill(o.skill) if o.skill is not None else None
    threshold = o.route_threshold if o.route else None
    return ContextPlan(granted, tool, args, skill, o.skill_resource, threshold)


def gather(prompt: str, plan: ContextPlan, piped: str | None = None) -> TurnContext:
    """The tool results, skills and routing decision of one turn. `piped` is the text read
    from stdin, if any (it is part of `prompt` too)."""
    if plan.empty:
        return TurnContext()
    from .. import skills
    from ..tools import TOOL_REGISTRY
    from ..tools.gate import run_gated

    tool, args = plan.tool, plan.tool_args
    active = []
    if plan.skill is not None:
        active.append(skills.activate(plan.skill, plan.skill_resources))
    routing = None
    if plan.route_threshold is not None:
        from ..router import route, targets_from

        catalog = skills.discover_skills(warn=warn)
        targets = targets_from(TOOL_REGISTRY.values(), catalog.skills.values())
        routing = route(prompt, targets, plan.route_threshold, tools=TOOL_REGISTRY)
        note("[routing] " + json.dumps(routing.to_dict(), ensure_ascii=False))
        chosen = plan.skill.name if plan.skill is not None else None
        if routing.target_type == "skill" and routing.target != chosen:
            active.append(skills.activate(catalog.get(routing.target or "")))
        elif routing.target_type == "tool" and routing.target is not None:
            tool, args = TOOL_REGISTRY[routing.target], dict(routing.args)
    if tool is not None:
        args = args | tool.piped_args(args, piped)
    results = (run_gated(tool, args, plan.granted),) if tool is not None else ()
    return TurnContext(tool_results=tuple(results), skills=tuple(active), routing=routing)
