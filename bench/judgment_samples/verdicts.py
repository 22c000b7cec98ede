"""The by-hand verdicts on `bench/judgment_precision_bench.py answers` (httpx 0.28.1, click 8.5.1,
rich 15.0.0), written beside them: `python verdicts.py answers.jsonl python_samples.jsonl`; prints
the precision per query. Each verdict was given reading the answer in the project's code."""

import io
import json
import sys
from collections import defaultdict
from pathlib import Path

R, N = "real", "noise"
# (project, query prefix) -> (verdicts by rank, why); "(none)" rows are judged like any answer
V = {
    ("httpx", "similar request_context --mode signature"): (
        [R] * 10,
        "takes `request: Request`, the anchor's one parameter, by name and type",
    ),
    ("httpx", "similar request_context"): (
        [N] * 9,
        "shares only 'request' (weighted down: in every other name) or the 'context' of create_ssl_context; no context manager among them",
    ),
    ("httpx", "similar --snippet"): (
        [R],
        "the original of the renamed copy, alone: look-alikes no longer pass",
    ),
    ("httpx", "conventions errors"): (
        [R] * 8,
        "what the library raises and catches, counted once per exception",
    ),
    ("httpx", "conventions logging"): (
        [R] * 3,
        "warnings and the one logger of _client.py; print() no longer counted",
    ),
    ("httpx", "conventions imports"): ([R] * 6, "factual shares of import styles"),
    ("httpx", "conventions naming"): (
        [R] * 7 + [N] + [R] * 2,
        "styles and suffixes hold; 'function names start with encode' is a handful of helpers, not a rule",
    ),
    ("httpx", "conventions async"): ([R] * 3, "async twins of the sync API"),
    ("httpx", "conventions tests"): ([R], "no tests in the package folder: nothing said"),
    ("httpx", "place 'retry"): (
        [R, N, N, N, N],
        "transport layer first (base.py; retries live in default.py, not listed); mock/wsgi/asgi/__init__ only share words",
    ),
    ("httpx", "place 'decode"): (
        [R, N, N, N, N],
        "_decoders.py owns decompression; the rest share 'response'",
    ),
    ("httpx", "consistent <sloppy"): (
        [R, R],
        "raise Exception where httpx has HTTPError & co; `import os, sys` where no file groups imports (print and the literal logger rightly not flagged: httpx barely logs and names its logger 'httpx')",
    ),
    ("httpx", "consistent <_"): ([R], "the project's own file: nothing flagged"),
    ("httpx", "signature standard"): (
        [R] * 10,
        "central files with their public top-level names, once each",
    ),
    ("httpx", "duplicates"): (
        [R] * 6 + [N] + [R] * 3,
        "sync/async twins in _client.py and _api.py; group 7 is two different docstrings (one token each once renamed) and a few parameter lines",
    ),
    ("click", "similar open_stream --mode signature"): (
        [R] * 5,
        "share filename/mode/encoding/errors/atomic",
    ),
    ("click", "similar open_stream"): (
        [R, R, R],
        "open, open_file, open_url are siblings (the *Stream classes, which only share 'stream', now fall under the bar)",
    ),
    ("click", "similar --snippet"): ([R], "the original, alone"),
    ("click", "conventions errors"): ([R] * 8, "facts of click's error handling"),
    ("click", "conventions logging"): ([R], "click warns, never logs or counts print()"),
    ("click", "conventions imports"): ([R] * 6, "factual"),
    ("click", "conventions naming"): (
        [R] * 10,
        "styles; get_* accessors and *Type/*Dict classes are real families",
    ),
    ("click", "conventions async"): ([R], "no async: nothing said"),
    ("click", "conventions tests"): ([R], "no tests in the package folder"),
    ("click", "place 'a parameter"): (
        [R, N, N, N],
        "types.py holds click.Path and File; the rest share words",
    ),
    ("click", "place 'shell"): (
        [R, N, R, R, N],
        "shell_completion.py first; types.py and core.py hold shell_complete methods; parser.py and exceptions.py do not",
    ),
    ("click", "consistent <sloppy"): ([R, R], "own ClickException family; grouped import"),
    ("click", "consistent <_compat"): ([R], "own file, nothing flagged"),
    ("click", "consistent <_winconsole"): (
        [N],
        "`Py_buffer` mirrors a C struct for ctypes: ordinary in that file",
    ),
    ("click", "consistent <core"): (
        [R, R],
        "Context.__init__ (174 lines) and main (135) are the project's top 2% by length: outliers a reviewer would question, not ordinary code",
    ),
    ("click", "signature standard"): ([R] * 10, "central files, public names once"),
    ("click", "duplicates"): (
        [R] * 6 + [N] + [R] * 3,
        "decorator twins, exception twins, Path/File types; group 7 is Context.__init__'s periodic `if x is None: x = command.x` boilerplate",
    ),
    ("rich", "similar group --mode signature"): (
        [R] * 3,
        "decorator factories taking one bool option and returning a Callable",
    ),
    ("rich", "similar group"): ([R], "Group is what group() builds"),
    ("rich", "similar --snippet"): (
        [R, N],
        "the original first; then the decorator nested inside it (part of the original, not another copy)",
    ),
    ("rich", "conventions errors"): ([R] * 8, "facts"),
    ("rich", "conventions logging"): (
        [R],
        "rich does not log: nothing said (print() no longer counted)",
    ),
    ("rich", "conventions imports"): ([R] * 6, "facts"),
    ("rich", "conventions naming"): (
        [R] * 9,
        "styles; PascalCase functions are the win32 API mirrors",
    ),
    ("rich", "conventions async"): ([R], "no async"),
    ("rich", "conventions tests"): ([R], "no tests in the package folder"),
    ("rich", "place 'draw"): (
        [R, R, R, N],
        "progress_bar.py, bar.py, progress.py; traceback.py only shares 'bar'",
    ),
    ("rich", "place 'highlight"): (
        [R, R, N, N, N],
        "highlighter.py and syntax.py; errors/traceback/json share words",
    ),
    ("rich", "consistent <sloppy"): ([R, R], "own exception classes; grouped import"),
    ("rich", "consistent <console"): (
        [R] * 3,
        "__init__ 133, print 105, export_svg 253 lines: the project's top 2%",
    ),
    ("rich", "consistent <cells"): ([R], "own file, nothing flagged"),
    ("rich", "consistent <_unicode"): ([R], "own file, nothing flagged"),
    ("rich", "signature standard"): ([R] * 10, "central files, public names once"),
    ("rich", "duplicates"): (
        [R] * 10,
        "the generated unicode width tables copied between versions (data, but copies)",
    ),
}
rows = [json.loads(line) for line in Path(sys.argv[1]).read_text().splitlines()]
out = io.StringIO()
tally = defaultdict(lambda: [0, 0])
for r in rows:
    key = next((k for k in V if k[0] == r["project"] and r["query"].startswith(k[1])), None)
    assert key is not None, r["query"]
    verdicts, why = V[key]
    i = max(r["rank"], 1) - 1
    assert i < len(verdicts), (key, r["rank"])
    a = r["answer"]
    if isinstance(a, dict):
        if "occurrences" in a:
            where = "; ".join(f"{o['path']}:{o['start']}-{o['end']}" for o in a["occurrences"])
        elif "line" in a:
            where = f"{a['path']}:{a['line']}"
        elif "example" in a:
            where = a["example"]
        else:
            where = a.get("path", "")
    else:
        where = ""
    q = r["query"].split(" '")[0].split(" <")[0].split(" --snippet")[0]
    q = {"similar": "similar (name)"}.get(q, q)
    if r["query"].startswith("similar") and "--mode signature" in r["query"]:
        q = "similar --mode signature"
    if "--mode shape" in r["query"]:
        q = "similar --mode shape"
    if q.startswith("similar ") and q not in ("similar --mode signature", "similar --mode shape"):
        q = "similar (name)"
    if q.startswith("conventions"):
        q = "conventions"
    if q.startswith("consistent"):
        q = "consistent"
    tally[q][0] += verdicts[i] == R
    tally[q][1] += 1
    out.write(
        json.dumps(
            {
                "project": r["project"],
                "query": r["query"],
                "rank": r["rank"],
                "file": where,
                "answer": a,
                "verdict": verdicts[i],
                "why": why,
            }
        )
        + "\n"
    )
for q, (ok, n) in sorted(tally.items()):
    print(f"| `{q}` | {ok}/{n} |")
Path(sys.argv[2]).write_text(out.getvalue())
