"""TypeScript symbols against the compiler's own list (issue 25): of the exported top-level
declarations `tsc` lists for each file, how many the index records, and how much of each file
did not parse.

    python bench/judgment_ts_bench.py DIR --typescript PATH/typescript/lib/typescript.js [--json]

DIR holds a library's TypeScript sources (an npm tarball's `src/`, `npm pack zod`); the
reference is `bench/judgment_samples/ts_exports.js` run by `node` with the TypeScript package
given (`npm pack typescript@5`): `checker.getExportsOfModule` of each file, aliases resolved,
kept when the declaration is a top-level statement of that file. Overloads of one function are
one declaration. A declaration is recorded when the index holds a symbol of that name in that
file starting within two lines of it; files over 1 MB, which the index skips, are left out
and listed. "first parse" is the grammar alone (what ORE recorded
before the TypeScript recovery of `index.extract`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from ore.graph.index import extract as ex
from ore.graph.index.languages import parser_and_query

HERE = Path(__file__).resolve().parent


def reference(root: Path, typescript: str) -> dict[str, set[tuple[str, int]]]:
    files = sorted(
        str(p) for p in root.rglob("*.ts") if not p.name.endswith(".d.ts") and p.is_file()
    )
    done = subprocess.run(
        ["node", str(HERE / "judgment_samples" / "ts_exports.js"), typescript],
        input=json.dumps(files),
        capture_output=True,
        text=True,
        check=True,
    )
    out: dict[str, set[tuple[str, int]]] = {f: set() for f in files}
    seen: set[tuple[str, str, str]] = set()
    for path, name, line, kind in json.loads(done.stdout):
        if kind == "FunctionDeclaration" and (path, name, kind) in seen:
            continue  # an overload: the function once
        seen.add((path, name, kind))
        out[path].add((name, int(line)))
    return out


def first_parse(path: str, data: bytes) -> ex.FileIndex:
    parser, _query = parser_and_query("typescript")
    return ex._record(path, "typescript", data, parser.parse(data), 0, 0, "", False)


def measure(root: Path, typescript: str) -> dict[str, object]:
    ref = reference(root, typescript)
    total = now = before = 0
    broken: list[dict[str, object]] = []
    missed: list[str] = []
    too_large: dict[str, int] = {}
    for path, wanted in sorted(ref.items()):
        data = Path(path).read_bytes()
        if len(data) > ex.MAX_BYTES:  # the index skips it (`too_large`): left out, and said
            too_large[str(Path(path).relative_to(root))] = len(wanted)
            continue
        record = ex.extract(path, "typescript", data)
        old = first_parse(path, data)
        bad, lines = ex.unparsed("typescript", data)
        old_bad = _old_unparsed(data)
        if bad or old_bad:
            rel = str(Path(path).relative_to(root))
            broken.append(
                {"file": rel, "lines": lines, "unparsed": bad, "unparsed_before": old_bad}
            )
        for name, line in wanted:
            total += 1
            hit = _has(record.symbols, name, line)
            now += hit
            before += _has(old.symbols, name, line)
            if not hit:
                missed.append(f"{Path(path).relative_to(root)}:{line} {name}")
    return {
        "root": str(root),
        "files": len(ref),
        "exported": total,
        "recorded": now,
        "recorded_first_parse": before,
        "share": round(now / total, 4) if total else 1.0,
        "share_first_parse": round(before / total, 4) if total else 1.0,
        "too_large": too_large,
        "files_with_errors": broken,
        "missed": missed[:40],
    }


def _has(symbols: tuple[ex.Symbol, ...], name: str, line: int) -> bool:
    return any(s.name == name and abs(s.line - line) <= 2 for s in symbols)


def _old_unparsed(data: bytes) -> int:
    parser, _query = parser_and_query("typescript")
    stack = [parser.parse(data).root_node]
    bad: set[int] = set()
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            bad.update(range(node.start_point[0], node.end_point[0] + 1))
        elif node.has_error:
            stack.extend(node.children)
    return len(bad)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="+", type=Path)
    parser.add_argument("--typescript", required=True, help="path of typescript/lib/typescript.js")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = [measure(root, args.typescript) for root in args.roots]
    if args.json:
        json.dump(results, sys.stdout, indent=1)
        print()
        return
    for r in results:
        print(
            f"{r['root']}: {r['files']} files, {r['exported']} exported declarations; recorded "
            f"{r['recorded']} ({r['share']:.2%}), first parse alone {r['recorded_first_parse']} "
            f"({r['share_first_parse']:.2%})"
        )
        for name, n in r["too_large"].items():
            print(f"  {name}: over 1 MB, not indexed ({n} exported declarations left out)")
        for b in r["files_with_errors"]:
            print(
                f"  {b['file']}: {b['unparsed']} of {b['lines']} lines unparsed "
                f"(first parse: {b['unparsed_before']})"
            )
        for m in r["missed"]:
            print(f"  missed {m}")


if __name__ == "__main__":
    main()
