"""Plain-text renderings of the judgment results (what `ore graph ...` prints without `--json`).

Every name and every line of found text placed in them goes through `cell` (a file's line break
or tab shown `\\x0a`, as in a table), as in `ore.graph.render.tables`."""

from __future__ import annotations

from collections.abc import Sequence

from ..results import (
    CloneGroup,
    Consistency,
    Convention,
    FileHits,
    FileInfo,
    Placement,
    Signature,
    SimilarMatch,
    SnippetMatch,
)
from .tables import cell, table

__all__ = [
    "clones_text",
    "consistency_text",
    "conventions_text",
    "file_hits_text",
    "files_text",
    "placement_text",
    "signature_text",
    "similar_text",
    "snippet_matches_text",
]


def clones_text(groups: Sequence[CloneGroup]) -> str:
    """One block per group: kind, size, then each occurrence as `path:start-end`."""
    if not groups:
        return "no duplicates"
    out = []
    for n, group in enumerate(groups, 1):
        out.append(
            f"{n}. {group.kind} clone, {group.lines} lines, {group.tokens} tokens, "
            f"{len(group.occurrences)} places"
        )
        out += [f"   {cell(o.path)}:{o.start}-{o.end}" for o in group.occurrences]
    return "\n".join(out)


def snippet_matches_text(rows: Sequence[SnippetMatch]) -> str:
    if not rows:
        return "no code like the snippet"
    return table(
        ["score", "kind", "location", "name"],
        [(r.score, r.kind, f"{r.path}:{r.start}-{r.end}", r.name) for r in rows],
    )


def similar_text(rows: Sequence[SimilarMatch]) -> str:
    if not rows:
        return "nothing similar"
    return table(
        ["score", "name", "kind", "location", "why"],
        [(r.score, r.name, r.kind, f"{r.path}:{r.line}", r.reason) for r in rows],
    )


def conventions_text(rows: Sequence[Convention]) -> str:
    out = []
    for c in rows:
        out.append(f"{c.topic} ({c.files} files): {cell(c.summary)}")
        out += [
            f"  {p.share:>4.0%}  {cell(p.name)}  ({p.count}, e.g. {cell(p.example)})"
            for p in c.patterns
        ]
    return "\n".join(out)


def consistency_text(c: Consistency) -> str:
    out = [f"deviation {c.score:.2f} from the conventions of {cell(c.scope)} (0 = consistent)"]
    for d in c.criteria:
        checked = f"{d.checked} checked" if d.checked else "nothing to check"
        out.append(f"  {d.criterion}: {d.score:.2f} ({checked})")
        out += [f"    - {cell(text)}" for text in d.deviations]
    return "\n".join(out)


def placement_text(p: Placement) -> str:
    if not p.files:
        return "no file shares a term with the description: " + ", ".join(map(cell, p.terms))
    out = ["terms: " + ", ".join(map(cell, p.terms)), "communities:"]
    for c in p.communities:
        out.append(f"  {c.score:.2f}  community {c.id}: {', '.join(map(cell, c.files))}")
        if c.reasons:
            out.append(f"        shares {', '.join(map(cell, c.reasons))}")
    out.append("files:")
    for f in p.files:
        out.append(f"  {f.score:.2f}  {cell(f.path)}  ({'; '.join(map(cell, f.reasons))})")
    return "\n".join(out)


def signature_text(s: Signature) -> str:
    return s.text


def files_text(rows: Sequence[FileInfo]) -> str:
    return table(
        ["score", "path", "language", "lines", "bytes", "symbols"],
        [(r.score, r.path, r.language, r.lines, r.size, r.symbols) for r in rows],
    )


def file_hits_text(rows: Sequence[FileHits]) -> str:
    out: list[str] = []
    for group in rows:
        if out:
            out.append("")
        out.append(f"{cell(group.path)} ({group.count})")
        out += [f"  {hit.line:>5}: {hit.text}" for hit in group.hits]
    return "\n".join(out)
