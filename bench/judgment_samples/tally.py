"""Count the by-hand verdicts of held-out samples (`heldout_*.jsonl`): real answers of all
answers, per project and per query family, so that the figures docs/graph.md gives can be read
again from the committed files:

    python bench/judgment_samples/tally.py bench/judgment_samples/heldout_*.jsonl

A family is the query's first word, with `similar`'s modes apart (`similar --mode signature`,
`similar --mode shape`) and `duplicates` split into its first ten and the rest (the draw). A row judged after a rule
(it has a `sample` note: an answer new to the first ten once the rule moved it there) is counted
apart, as "after a rule", since it does not measure the rule.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path


def family(row: dict[str, object]) -> str:
    """The query family a sample row belongs to."""
    query = str(row["query"])
    words = query.split()
    name = words[0] if words else "?"
    if name == "similar":
        mode = re.search(r"--mode (\w+)", query)
        return f"similar --mode {mode.group(1)}" if mode else "similar by name"
    if name == "duplicates":
        rank = row.get("rank")
        part = "first ten" if isinstance(rank, int) and rank <= 10 else "drawn"
        return f"duplicates, {part}" + (", after a rule" if "sample" in row else "")
    return name


def tally(paths: list[Path]) -> dict[tuple[str, str], Counter[str]]:
    """(project, family) -> verdict counts."""
    counts: dict[tuple[str, str], Counter[str]] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            key = (str(row["project"]), family(row))
            counts.setdefault(key, Counter())[str(row["verdict"])] += 1
    return counts


def main() -> None:
    paths = [Path(p) for p in sys.argv[1:]]
    if not paths:
        raise SystemExit("usage: tally.py SAMPLE.jsonl [...]")
    counts = tally(paths)
    totals: dict[str, Counter[str]] = {}
    for (project, name), c in sorted(counts.items()):
        print(f"{project:24s} {name:38s} {c['real']:>3} / {sum(c.values()):<3}")
        totals.setdefault(name, Counter()).update(c)
    print()
    for name, c in sorted(totals.items()):
        share = c["real"] / max(1, sum(c.values()))
        print(f"{'all':24s} {name:38s} {c['real']:>3} / {sum(c.values()):<3} ({share:.0%})")


if __name__ == "__main__":
    main()
