"""Replaying or chaining from an execution artifact: the request that sends a recorded turn again,
and its recorded controls through the checks the command line makes (an artifact is data from
anywhere)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .request import Server, TurnRequest

if TYPE_CHECKING:
    from ..artifacts import ExecutionArtifact
    from ..turn_types import TurnOptions

__all__ = [
    "LOG_SOURCE",
    "read_parent",
    "recorded_controls",
    "recorded_turn_options",
    "replay_request",
]

#: `--artifact-in log:ID` (`log:-1`: the latest) reads a logged turn's artifact from the log.
LOG_SOURCE = "log:"


def read_parent(source: str) -> ExecutionArtifact:
    """The artifact a replay or chain starts from: a file, stdin ("-"), or a logged turn
    (`log:ID`, `log:-1` for the latest; a file of that name is `./log:ID`). Read as untrusted
    data either way: a bad one is one `ArtifactError` or `LogError` line, before any call."""
    if source.startswith(LOG_SOURCE):
        from ..errors import ArtifactError
        from ..log import load_artifact

        ref = source[len(LOG_SOURCE) :].strip()
        try:
            number = int(ref)
        except ValueError:
            number = 0
        if number == 0:
            raise ArtifactError(
                f"--artifact-in {source}: give a logged turn's id ('ore log list'), or log:-1"
            )
        return load_artifact(number)
    from ..artifacts import read_artifact

    return read_artifact(source)


def recorded_controls(parent: ExecutionArtifact, prompt: str | None = None) -> Mapping[str, Any]:
    """The controls a replay of `parent` sends again (its recorded options, schema, thinking,
    images), in their JSON form; empty for a chain, which is a new turn."""
    from ..artifacts import plan_turn

    return plan_turn(parent, prompt).controls


def recorded_turn_options(recorded: Mapping[str, Any]) -> TurnOptions:
    """A replayed artifact's recorded controls as `TurnOptions`, through the checks the command
    line makes: options as `-o` checks them, `keep_alive` a duration or seconds, `think` a bool
    or a level, `schema` an object. An artifact is data from anywhere: a bad field is an
    `OptionError` naming it. Images are not re-read here (the recording holds only their hashes;
    the command line re-reads and checks the files)."""
    from ..errors import OptionError
    from ..model_options import check_model_options
    from ..turn_types import NO_TURN_OPTIONS, TurnOptions

    if not recorded:
        return NO_TURN_OPTIONS
    where = "the artifact's input.{}"
    keep_alive = recorded.get("keep_alive")
    if keep_alive is not None and (
        isinstance(keep_alive, bool) or not isinstance(keep_alive, str | int)
    ):
        raise OptionError(f"{where.format('keep_alive')} must be a duration or a number of seconds")
    think = recorded.get("think")
    if think is not None and not isinstance(think, bool) and think not in ("low", "medium", "high"):
        raise OptionError(f"{where.format('think')} must be true, false, low, medium or high")
    schema = recorded.get("schema")
    if schema is not None and not isinstance(schema, Mapping):
        raise OptionError(f"{where.format('schema')} must be a JSON Schema object")
    return TurnOptions(
        options=check_model_options(recorded.get("options"), where.format("options")),
        keep_alive=keep_alive,
        schema=schema,
        think=think,
    )


def replay_request(
    parent: ExecutionArtifact, prompt: str | None = None, **fields: Any
) -> TurnRequest:
    """The request that replays `parent` (no prompt) or chains from it (a new prompt): its
    messages, system prompt, context and (for a replay) the controls it recorded, checked as
    `-o` checks options (`recorded_turn_options`). `fields` set the rest (`model` overrides the
    recorded one; `controls` the recorded ones; `system` is used by a chain and by a replay of
    an artifact that recorded no messages)."""
    from ..artifacts import plan_turn
    from .request import persona

    system = fields.pop("system", persona())
    # The recorded messages hold the -f files' text (`input.files` names them): a replay sends
    # that text as it was, from any folder and for stdin; only a file still where it was and
    # changed since is refused (issue 22: the user may mean its new text, and chains for it).
    plan = plan_turn(parent, prompt, system=system)
    if prompt is None:
        from .files import read_again, read_recorded_file

        records = parent.controls.get("files")
        read_again(
            records, read_recorded_file, noun="-f file", flag="-f", field="files", recorded=True
        )
    recorded = parent.backend
    server = fields.pop("server", Server())
    if recorded is not None and server.recorded is None:
        from dataclasses import replace

        server = replace(server, recorded=(recorded.name, recorded.base_url))
    if "controls" not in fields:
        fields["controls"] = recorded_turn_options(plan.controls)
    return TurnRequest(
        messages=plan.messages,
        prompt=plan.prompt,
        model=fields.pop("model", None) or plan.model_id,
        system=plan.system,
        server=server,
        tool_results=plan.tool_results,
        parent=parent,
        relation=plan.relation,
        **fields,
    )
