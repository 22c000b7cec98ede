"""`ore mcp` reads its client's lines itself (`ore.mcp.inbound`): every line that is no JSON-RPC
message is answered with the error JSON-RPC names for it, with the line's id when it has a
usable one, and no line is held in memory past a bound."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio
import mcp_types as types
from test_mcp_breaks import HELLO, INITIALIZED

from ore.mcp.inbound import Cutter, Inbound, Rejected, judge

ORE = Path(sys.executable).with_name("ore")

PING = b'{"jsonrpc":"2.0","id":99,"method":"ping"}'

#: Lines that are no message, and the (id, code) each is answered with.
REFUSED = [
    (b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"x"}', 5, types.INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":11,"method":"ping","params":[1]}', 11, types.INVALID_REQUEST),
    (
        b'{"jsonrpc":"2.0","id":"a","method":"ping","params":{"x":"\\ud800"}}',
        "a",
        types.PARSE_ERROR,
    ),
    (b'[{"jsonrpc":"2.0","id":7,"method":"ping"}]', None, types.INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', None, types.INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', None, types.INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', None, types.INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', None, types.INVALID_REQUEST),
    (b'{"jsonrpc":"1.0","id":9,"method":"ping"}', 9, types.INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":13,"method":5}', 13, types.INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":12}', 12, types.INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', None, types.PARSE_ERROR),
    (b'"ping"', None, types.INVALID_REQUEST),
    (b"non\xffsense", None, types.PARSE_ERROR),
    (b'{"jsonrpc":"2.0","id":15,"method":"ping"', None, types.PARSE_ERROR),
    (b"[" * 100_000, None, types.PARSE_ERROR),
]


@pytest.mark.parametrize(("line", "ident", "code"), REFUSED)
def test_a_line_that_is_no_message_is_answered_with_its_error(
    line: bytes, ident: Any, code: int
) -> None:
    judged = judge(line)
    assert isinstance(judged, Rejected)
    assert (judged.ident, judged.code) == (ident, code)
    assert judged.message.startswith(("Invalid request: ", "Parse error: "))


def test_messages_pass_and_blank_lines_are_nothing() -> None:
    assert judge(b"  \n") is None
    request = judge(PING)
    assert not isinstance(request, Rejected) and request is not None
    assert isinstance(request.message, types.JSONRPCRequest) and request.message.id == 99
    note = judge(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    assert note is not None and isinstance(note.message, types.JSONRPCNotification)
    # a response from the client, malformed: a response is never answered
    assert judge(b'{"jsonrpc":"2.0","id":14,"result":5}') is None
    assert judge(b'{"jsonrpc":"2.0","id":14,"error":"no"}') is None


def test_lines_are_cut_as_they_come_and_one_over_the_bound_is_never_held() -> None:
    cutter = Cutter(8)
    assert cutter.feed(b"ab") == []
    assert cutter.feed(b"c\nde\n\nf") == [b"abc", b"de", b""]
    assert cutter.feed(b"ghij") == []  # "fghij": held, within the bound
    assert cutter.feed(b"klmn" * 1000) == []  # over it: dropped as it comes
    assert len(cutter._held) == 0
    assert cutter.feed(b"op\nq") == [None]  # the long line ends: said once, as None
    assert cutter.end() == b"q"  # the input's last line, with no newline after it
    assert cutter.feed(b"12345678\n123456789\n") == [b"12345678", None]


@pytest.mark.parametrize("stdin", ["pipe", "file"])
def test_a_line_over_the_bound_is_answered_and_dropped_and_the_next_is_read(
    stdin: str, tmp_path: Path
) -> None:
    replies: list[Any] = []

    class Sink:
        async def send(self, item: Any) -> None:
            replies.append(item)

    sent = b'{"jsonrpc":"2.0","id":1,"method":"' + b"x" * 200_000 + b'"}\n' + PING  # no newline
    if stdin == "pipe":  # polled by the event loop
        read, write = os.pipe()
        writer = threading.Thread(target=lambda: (os.write(write, sent), os.close(write)))
        writer.start()
    else:  # a file (`ore mcp < requests`): epoll cannot watch it, a thread reads it
        (tmp_path / "requests").write_bytes(sent)
        read = os.open(tmp_path / "requests", os.O_RDONLY)
    inbound = Inbound(Sink(), limit=1024, fd=read)
    os.close(read)

    async def take() -> list[Any]:
        return [item async for item in inbound.messages()]

    passed = anyio.run(take)
    if stdin == "pipe":
        writer.join()
    assert [item.message.id for item in passed] == [99]
    assert len(replies) == 1
    error = replies[0].message
    assert error.id is None and error.error.code == types.INVALID_REQUEST
    assert "over 1024 bytes" in error.error.message


@pytest.mark.invariant
def test_every_line_a_client_sends_gets_an_answer_or_is_a_notification(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    pass\n")
    lines = _hello()
    lines += [line for line, _ident, _code in REFUSED] + [b"", PING]
    done = subprocess.run(  # the client closes stdin after its lines: each is answered first
        [str(ORE), "mcp", "--root", str(root)],
        input=b"\n".join(lines) + b"\n",
        capture_output=True,
        timeout=60,
        env={**os.environ, "ORE_HOME": str(tmp_path / "home")},
    )
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert replies[0]["id"] == 1 and "result" in replies[0]
    errors = [(reply["id"], reply["error"]["code"]) for reply in replies[1:-1]]
    assert errors == [(ident, code) for _line, ident, code in REFUSED]
    assert replies[-1] == {"jsonrpc": "2.0", "id": 99, "result": {}}  # still serving after them


def _hello() -> list[bytes]:
    return [json.dumps(HELLO).encode(), json.dumps(INITIALIZED).encode()]


@pytest.mark.invariant
def test_a_refused_line_reusing_the_id_of_a_request_under_way_leaves_it_its_one_answer(
    tmp_path: Path,
) -> None:
    root = tmp_path / "r"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    pass\n")
    call = (
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"stats","arguments":{}}}'
    )
    reused = b'{"jsonrpc":"2.0","id":3,"method":"ping","params":"x"}'
    done = subprocess.run(  # stdin closed right after: the call under way is still answered
        [str(ORE), "mcp", "--root", str(root)],
        input=b"\n".join([*_hello(), call, reused]) + b"\n",
        capture_output=True,
        timeout=60,
        env={**os.environ, "ORE_HOME": str(tmp_path / "home")},
    )
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()][1:]
    assert [reply["id"] for reply in replies if "error" in reply] == [None]
    answers = [reply for reply in replies if reply["id"] == 3]
    assert len(answers) == 1 and "result" in answers[0], replies


def test_a_server_started_with_stdin_closed_ends_at_once(tmp_path: Path) -> None:
    """`ore mcp <&-`: fd 0 may become a descriptor of ORE's own (a pipe it opens); it is never
    read as the client's."""
    (tmp_path / "r").mkdir()
    done = subprocess.run(
        ["sh", "-c", 'exec "$0" mcp --root "$1" <&-', str(ORE), str(tmp_path / "r")],
        capture_output=True,
        timeout=30,
        env={**os.environ, "ORE_HOME": str(tmp_path / "home")},
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
