"""What one ORE turn did: the result `ore.turn.run_turn` returns, for the caller to show."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._frozen import contract
from ..errors import OreError

if TYPE_CHECKING:
    from ..artifacts import ExecutionArtifact
    from ..core import Turn
    from ..turn_types import TurnContext
    from .request import Conversation

__all__ = ["TurnNotKept", "TurnResult"]


@contract
class TurnResult:
    """What one turn did.

    :param turn: the core's record: the response, exactly what was sent, the controls.
    :param model: the model that was asked (the response names the one that answered).
    :param context: the tool results, skills and routing decision the turn carried.
    :param conversation: the conversation after the turn (None for a lone turn).
    :param seconds: the wall-clock time of the reasoner call.
    :param warnings: one line each: an answer cut at the token limit, a prompt evidently cut
        to fit the context window.
    :param data: the parsed JSON of an answer that matched the request's schema.
    :param schema_error: why the answer did not match the schema (it is still saved).
    :param artifact: the execution artifact, when one was asked for.
    :param kept: what was written, for a message: "the turn is saved in session 'x'", ...;
        when the session asked for holds another one (a fork into a name that exists, or that
        another process took first), the first says the new name it went to: "the turn is saved
        in session 'x-2' ('x' holds another session)", and `conversation.name` is 'x-2'.
    :param history: the part of the conversation that was sent.
    :param served: the backend that answered, its name and address (what an artifact of the
        turn records: `ore.turn.artifact_of` builds one from the request and this result).
    """

    turn: Turn
    model: str
    context: TurnContext
    conversation: Conversation | None
    seconds: float
    warnings: tuple[str, ...] = ()
    data: Any = None
    schema_error: str | None = None
    artifact: ExecutionArtifact | None = None
    kept: tuple[str, ...] = ()
    served: tuple[str, str | None] | None = None

    @property
    def content(self) -> str:
        """The answer's text."""
        return self.turn.response.content

    def to_dict(self) -> dict[str, Any]:
        """The `--json` object: the response, `data` for a schema answer, `routing`."""
        data = self.turn.response.to_dict()
        if self.turn.options.schema is not None and self.schema_error is None:
            data["data"] = self.data
        if self.context.routing is not None:
            data["routing"] = self.context.routing.to_dict()
        return data


class TurnNotKept(OreError):
    """The model answered, and keeping the turn failed in part (a session that cannot be
    written, an artifact on a full disk): the answer is not lost. `result` is the whole turn
    (its `kept` says what was written; its `conversation` holds the turn in memory, with
    `saved` unchanged when the session was not written, so the next save retries it). The
    message says what was and was not kept, in one line."""

    def __init__(self, message: str, result: TurnResult) -> None:
        super().__init__(message)
        self.result = result
