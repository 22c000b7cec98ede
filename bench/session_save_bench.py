"""Saving a turn as a session grows (issue 26, item 5): the time of one save at turn 1, 1,000
and 2,000 of one conversation, through `ore.turn.saving.append_turn` (the one place a turn
reaches a saved session: the append under the session's lock, then the model recorded in the
listing cache), on a real filesystem with fsync.

Anchor, in the same run and the same folder: the same conversation saved the way ORE did before
(the whole file read, checked and written again every turn), forced by forgetting the store's
note of the file before each save, so every save takes the slow path.

    python bench/session_save_bench.py [--turns 2000] [--repeats 3] [--dir DIR]

Each figure is the median, over the repeats, of the median of a window of 9 saves centred on
that turn (turn 1 alone: it creates the file). Target: the save at turn 2,000 < 2x turn 1.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from ore.store import FileSessionStore
from ore.store.tail import clear_state
from ore.turn import Conversation
from ore.turn.saving import append_turn
from ore.types import Message, Session

QUESTION = "How do I make this function faster without changing what it returns? " * 3
ANSWER = (
    "Profile first: `python -m cProfile -s cumtime app.py`. Then, in order of payoff:\n\n"
    "1. Cache the lookups done inside the loop.\n2. Build the list once, not per item.\n"
) * 8  # about 1.4 KB, a typical answer


def one_conversation(home: Path, turns: int, whole_file: bool) -> list[float]:
    """Seconds of each save of a `turns`-turn conversation saved as session 'bench'."""
    os.environ["ORE_HOME"] = str(home)
    store = FileSessionStore(home / "sessions")
    conversation = Conversation(Session(), "bench", 0, None)
    times = []
    for i in range(turns):
        if whole_file and i:
            with store._locked("bench"):
                clear_state(store.state_path("bench"))
        whole = conversation.session.append(
            Message("user", f"{i} {QUESTION}"), Message("assistant", f"{i} {ANSWER}")
        )
        started = time.perf_counter()
        conversation = append_turn(conversation, whole, "llama3.2:latest")
        times.append(time.perf_counter() - started)
    assert len(store.load("bench").messages) == 2 * turns
    return times


def at(times: list[float], turn: int) -> float:
    """The median of the 9 saves centred on `turn` (1-based); turn 1 is its own."""
    if turn == 1:
        return times[0]
    lo, hi = max(1, turn - 5), min(len(times), turn + 4)
    return statistics.median(times[lo:hi])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", default=None, help="where the sessions go (default: a temp dir)")
    args = parser.parse_args()
    points = [1, args.turns // 2, args.turns]
    results: dict[str, list[list[float]]] = {"in place (now)": [], "whole file (before)": []}
    for _ in range(args.repeats):
        for label, whole in (("in place (now)", False), ("whole file (before)", True)):
            home = Path(tempfile.mkdtemp(prefix="ore-save-bench-", dir=args.dir))
            try:
                times = one_conversation(home, args.turns, whole)
                size = (home / "sessions" / "bench.json").stat().st_size
            finally:
                shutil.rmtree(home, ignore_errors=True)
            results[label].append(times)
    print(
        f"{args.turns} turns, {args.repeats} repeats, final file {size / 1e6:.1f} MB, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    print(
        "| saving | "
        + " | ".join(f"turn {p:,}" for p in points)
        + f" | turn {points[-1]:,} / turn 1 | all saves |"
    )
    print("|---|" + "---|" * (len(points) + 2))
    for label, runs in results.items():
        cells = [statistics.median(at(t, p) for t in runs) * 1000 for p in points]
        total = statistics.median(sum(t) for t in runs)
        ratio = cells[-1] / cells[0]
        shown = " | ".join(f"{c:.2f} ms" for c in cells)
        print(f"| {label} | {shown} | {ratio:.2f}x | {total:.1f} s |")


if __name__ == "__main__":
    main()
