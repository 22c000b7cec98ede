"""Saving a turn as a session grows (issue 26, item 5): the time of one save at turn 1, 1,000
and 2,000 of one conversation, through `ore.turn.saving.append_turn` (the one place a turn
reaches a saved session: the append under the session's lock, then the model recorded in the
listing cache), on a real filesystem with fsync.

Anchor, in the same run and the same folder: the same conversation saved the way ORE did before
(the whole file read, checked and written again every turn), forced by forgetting the store's
note of the file before each save, so every save takes the slow path.

    python bench/session_save_bench.py [--turns 2000] [--repeats 3] [--dir DIR]

The two conversations are saved in turns, interleaved, so both see the same load. Each figure is
the median over the repeats of turn 1's save (which creates the file), or of the median of the
21 saves centred on the turn. Target: the save at turn 2,000 < 2x turn 1.
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


class Saved:
    """One conversation being saved as session 'bench' under its own `ORE_HOME`."""

    def __init__(self, home: Path, whole_file: bool) -> None:
        self.home, self.whole_file = home, whole_file
        self.store = FileSessionStore(home / "sessions")
        self.conversation = Conversation(Session(), "bench", 0, None)
        self.times: list[float] = []

    def save(self, i: int) -> None:
        os.environ["ORE_HOME"] = str(self.home)  # the listing cache goes there too
        if self.whole_file and i:
            with self.store._locked("bench"):  # the anchor: the old way, every turn
                clear_state(self.store.state_path("bench"))
        whole = self.conversation.session.append(
            Message("user", f"{i} {QUESTION}"), Message("assistant", f"{i} {ANSWER}")
        )
        started = time.perf_counter()
        self.conversation = append_turn(self.conversation, whole, "llama3.2:latest")
        self.times.append(time.perf_counter() - started)


def at(times: list[float], turn: int) -> float:
    """Turn 1's save (it creates the file); else the median of the 21 saves centred on `turn`."""
    if turn == 1:
        return times[0]
    lo, hi = max(1, turn - 11), min(len(times), turn + 10)
    return statistics.median(times[lo:hi])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", default=None, help="where the sessions go (default: a temp dir)")
    args = parser.parse_args()
    points = [1, 11, args.turns // 2, args.turns]
    labels = {False: "in place (now)", True: "whole file (before)"}
    results: dict[str, list[list[float]]] = {label: [] for label in labels.values()}
    loads = []
    for _ in range(args.repeats):
        homes = {w: Path(tempfile.mkdtemp(prefix="ore-save-bench-", dir=args.dir)) for w in labels}
        try:
            runs = {w: Saved(homes[w], w) for w in labels}
            for i in range(args.turns):  # interleaved: both see the same load
                for w in labels:
                    runs[w].save(i)
            size = (homes[False] / "sessions" / "bench.json").stat().st_size
            for w, run in runs.items():
                assert len(run.store.load("bench").messages) == 2 * args.turns
                results[labels[w]].append(run.times)
        finally:
            for home in homes.values():
                shutil.rmtree(home, ignore_errors=True)
        loads.append(os.getloadavg()[0])
    print(
        f"{args.turns} turns, {args.repeats} repeats, final file {size / 1e6:.1f} MB, "
        f"load {min(loads):.1f}-{max(loads):.1f}"
    )
    heads = " | ".join(f"turn {p:,}" for p in points)
    print(f"| saving | {heads} | turn {points[-1]:,} / turn 1 | all saves |")
    print("|---|" + "---|" * (len(points) + 2))
    for label, runs_ in results.items():
        cells = [statistics.median(at(t, p) for t in runs_) * 1000 for p in points]
        total = statistics.median(sum(t) for t in runs_)
        shown = " | ".join(f"{c:.2f} ms" for c in cells)
        print(f"| {label} | {shown} | {cells[-1] / cells[0]:.2f}x | {total:.1f} s |")


if __name__ == "__main__":
    main()
