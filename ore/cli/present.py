"""What a turn's answer means for the person, after the one reasoner call: an empty answer is an
error (and is saved nowhere), an answer cut off at the token limit or a prompt evidently cut to
fit the context window gets one warning line on stderr.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import OreError
from .console import warn

if TYPE_CHECKING:
    from ..core import Turn

__all__ = ["check_answer"]

_LENGTH_HINT = "allow more with -o num_predict=N"


def check_answer(turn: Turn) -> None:
    """Raise for an empty answer (before anything is saved); warn for one cut off at the token
    limit (`done_reason` "length", which both backends report)."""
    response = turn.response
    cut = response.metadata.get("done_reason") == "length"
    if not response.content.strip():
        why = f": it stopped at the token limit; {_LENGTH_HINT}" if cut else ""
        raise OreError(f"the model returned an empty answer{why}; nothing was saved")
    if cut:
        warn(f"the answer was cut off at the token limit; {_LENGTH_HINT}")
