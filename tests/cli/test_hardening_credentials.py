"""Credentials go only where the user sent them, no backend follows a redirect, no line quoting a
server shows a credential, and `--max-time` bounds the whole reply: each tried as an attacker
would, through real `ore` processes against the loopback servers (issue 21, items 1-4a, 10)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from _cli import needs_ore, one_line_error, run_ore
from fake_ollama import FakeOllama
from fake_openai import FakeOpenAI

pytestmark = needs_ore

KEY = "sk-cred-0123456789abcdef"
OTHER_KEY = "sk-other-fedcba9876543210"
MODEL = "llama3.2:latest"


def _pieces(secret: str, size: int = 6) -> set[str]:
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


def _leaked(text: str, *secrets: str) -> list[str]:
    """Every 6-character piece of a secret found in `text` (no part of one may show)."""
    return [p for s in secrets for p in _pieces(s) if p in text]


@contextmanager
def _listener(port: int = 0) -> Iterator[tuple[socket.socket, int]]:
    """A loopback socket that only records whether anything connected to it."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(8)
    sock.setblocking(False)
    try:
        yield sock, sock.getsockname()[1]
    finally:
        sock.close()


def _connected(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def _artifact(env: dict[str, str], tmp_path: Path, backend: dict[str, object]) -> Path:
    """A real artifact from a turn against the loopback Ollama, its backend record replaced."""
    path = tmp_path / "made.json"
    made = run_ore("hi", "--artifact-out", str(path), env=env)
    assert made.returncode == 0, made.stderr
    data = json.loads(path.read_text(encoding="utf-8"))
    data["backend"] = backend
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(data), encoding="utf-8")
    return hostile


def _keys_exported(env: dict[str, str], proxy_port: int) -> dict[str, str]:
    """An Ollama user's environment with every key exported, and a proxy that records any
    connection (so a request to a hosted address, api.deepseek.com included, would show)."""
    proxy = f"http://127.0.0.1:{proxy_port}"
    return {
        **env,
        "OPENAI_API_KEY": KEY,
        "ORE_API_KEY": KEY,
        "DEEPSEEK_API_KEY": OTHER_KEY,
        "HTTPS_PROXY": proxy,
        "HTTP_PROXY": proxy,
        "ALL_PROXY": proxy,
        "NO_PROXY": "",
    }


# -- 1: an artifact cannot send a key to an address of its choosing -----------------------------


@pytest.mark.invariant
@pytest.mark.parametrize("name", ["openai", "deepseek"])
@pytest.mark.parametrize("chain", [False, True], ids=["replay", "chain"])
def test_an_artifact_naming_a_keyed_backend_is_refused_and_sends_nothing(
    fake_ollama, ore_env, tmp_path, name, chain
) -> None:
    artifact = _artifact(ore_env, tmp_path, {"name": name, "base_url": None})
    fake_ollama.clear_requests()
    port = 8080 if name == "openai" else 0  # the built-in default the key used to reach
    try:
        listening = _listener(port)
        sock, bound = listening.__enter__()
    except OSError:
        pytest.skip(f"127.0.0.1:{port} is in use on this machine")
    try:
        env = _keys_exported(ore_env, bound)
        prompt = ("next question",) if chain else ()
        for extra in ((), ("--dry-run",)):
            result = run_ore("--artifact-in", str(artifact), *prompt, *extra, env=env)
            assert result.returncode == 1, result.stdout + result.stderr
            line = one_line_error(result)
            assert f"backend '{name}'" in line and f"--backend {name}" in line, line
            assert not _leaked(result.stdout + result.stderr, KEY, OTHER_KEY)
        assert not _connected(sock), "ORE connected to the built-in address or the proxy"
        assert fake_ollama.requests == []
    finally:
        listening.__exit__(None, None, None)


@pytest.mark.invariant
def test_the_user_confirms_an_artifacts_backend_with_the_flag_and_the_key_goes_to_their_server(
    ore_env, tmp_path
) -> None:
    artifact = _artifact(ore_env, tmp_path, {"name": "openai", "base_url": None})
    with FakeOpenAI(api_key=KEY) as server:
        env = {**ore_env, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": server.url}
        # Configured by the user (their OPENAI_BASE_URL), the artifact's backend is allowed.
        by_env = run_ore("--artifact-in", str(artifact), env=env)
        confirmed = run_ore("--backend", "openai", "--artifact-in", str(artifact), env=env)
        headers = [r["headers"] for r in server.requests if "/chat/" in r["path"]]
    assert by_env.returncode == 0 and confirmed.returncode == 0, by_env.stderr + confirmed.stderr
    assert [h["authorization"] for h in headers] == [f"Bearer {KEY}"] * 2


@pytest.mark.invariant
def test_an_artifacts_own_address_gets_no_key(ore_env, tmp_path) -> None:
    with FakeOpenAI() as server:
        artifact = _artifact(ore_env, tmp_path, {"name": "openai", "base_url": server.url})
        env = {**ore_env, "OPENAI_API_KEY": KEY, "ORE_API_KEY": KEY, "NO_PROXY": "127.0.0.1"}
        result = run_ore("--artifact-in", str(artifact), env=env)
        chats = [r for r in server.requests if "/chat/" in r["path"]]
    assert result.returncode == 0, result.stderr
    assert len(chats) == 1 and "authorization" not in chats[0]["headers"]


def test_dry_run_shows_where_the_turn_would_go_without_credentials(ore_env, tmp_path) -> None:
    ollama = {**ore_env, "OLLAMA_HOST": "http://alice:s3cr3tpw@127.0.0.1:5/?token=t0kenvalue"}
    shown = json.loads(run_ore("--dry-run", "-m", "m", "hi", env=ollama).stdout)
    assert shown["destination"] == {"backend": "ollama", "address": "http://127.0.0.1:5"}
    url = "http://bob:hunter22@127.0.0.1:6/v1?api-key=qk-abcdef123"
    openai = {**ore_env, "ORE_BACKEND": "openai", "ORE_BASE_URL": url, "ORE_API_KEY": KEY}
    result = run_ore("--dry-run", "-m", "m", "hi", env=openai)
    assert json.loads(result.stdout)["destination"] == {
        "backend": "openai",
        "address": "http://127.0.0.1:6/v1",
    }
    assert not _leaked(result.stdout + result.stderr, KEY, "hunter22", "qk-abcdef123", "bob:hu")
    deepseek = run_ore("--dry-run", "--backend", "deepseek", "-m", "m", "hi", env=ore_env)
    assert json.loads(deepseek.stdout)["destination"] == {
        "backend": "deepseek",
        "address": "https://api.deepseek.com",
    }
    artifact = _artifact(ore_env, tmp_path, {"name": "ollama", "base_url": "http://10.9.9.9:1"})
    env = {k: v for k, v in ore_env.items() if k != "OLLAMA_HOST"}
    replay = json.loads(run_ore("--artifact-in", str(artifact), "--dry-run", env=env).stdout)
    assert replay["destination"] == {"backend": "ollama", "address": "http://10.9.9.9:1"}


# -- 2: no redirect is followed, under any proxy or scheme -------------------------------------

PROXIES = {
    "none": {},
    "HTTPS_PROXY": {"HTTPS_PROXY": "http://127.0.0.1:9"},
    "ALL_PROXY": {"ALL_PROXY": "http://127.0.0.1:9"},
    "HTTP_PROXY": {"HTTP_PROXY": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9"},
}


@pytest.mark.invariant
@pytest.mark.parametrize("proxy", list(PROXIES))
@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_ollama_never_follows_a_redirect(fake_ollama, ore_env, proxy, stream) -> None:
    env = {**ore_env, **PROXIES[proxy], "NO_PROXY": "127.0.0.1,localhost"}
    with FakeOllama() as elsewhere:
        fake_ollama.redirect = (307, f"{elsewhere.url}/api/chat")
        result = run_ore(stream, "-m", MODEL, "the whole conversation", env=env)
        assert elsewhere.requests == [], "the redirect was followed"
    line = one_line_error(result)
    assert "redirect" in line and "HTTP 307" in line, line
    assert len(fake_ollama.chat_requests()) == 1


@pytest.mark.invariant
@pytest.mark.parametrize("proxy", list(PROXIES))
@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_the_openai_backend_never_follows_a_redirect(ore_env, proxy, stream) -> None:
    with FakeOpenAI(api_key=KEY) as server, FakeOpenAI() as elsewhere:
        server.fault = "redirect"
        server.redirect_to = f"{elsewhere.url}/chat/completions"
        env = {**ore_env, **PROXIES[proxy], "NO_PROXY": "127.0.0.1,localhost"}
        env |= {"ORE_BACKEND": "openai", "ORE_BASE_URL": server.url, "ORE_API_KEY": KEY}
        result = run_ore(stream, "-m", MODEL, "the whole conversation", env=env)
        assert elsewhere.requests == [], "the redirect was followed"
    line = one_line_error(result)
    assert "redirects to" in line and "HTTP 307" in line, line


# -- 3: one scrubber for every secret, URL credentials included --------------------------------


@pytest.mark.invariant
@pytest.mark.parametrize("key", [None, KEY], ids=["basic-auth", "bearer"])
def test_a_server_echoing_the_url_and_its_credentials_shows_none_of_them(ore_env, key) -> None:
    with FakeOpenAI() as server:
        server.fault = "echo-request"
        url = server.url.replace("http://", "http://alice:pa55w0rd@") + "?api-key=qk-0123456789"
        env = {**ore_env, "ORE_BACKEND": "openai", "ORE_BASE_URL": url}
        if key:
            env["ORE_API_KEY"] = key
        result = run_ore("-m", MODEL, "hi", env=env)
        got = server.requests[-1]
    line = one_line_error(result)
    assert "HTTP 500" in line and "cannot serve" in line, line
    sent = got["path"] + got["headers"].get("authorization", "")
    assert "qk-0123456789" in sent  # the server did get them, and repeated them
    secrets = ["pa55w0rd", "qk-0123456789", "alice:", *([key] if key else [])]
    assert not _leaked(result.stdout + result.stderr, *secrets), line


@pytest.mark.invariant
def test_an_ollama_error_repeating_the_configured_address_shows_no_credential(
    fake_ollama, ore_env
) -> None:
    host = f"http://alice:pa55w0rd@{fake_ollama.host}/?token=t0k3nvalue"
    fake_ollama.http_error = (500, {"error": f"upstream {host} said no (Bearer {KEY})"})
    result = run_ore("-m", MODEL, "hi", env={**ore_env, "OLLAMA_HOST": host, "OLLAMA_API_KEY": KEY})
    line = one_line_error(result)
    assert "HTTP 500" in line and "said no" in line, line
    assert not _leaked(line, "pa55w0rd", "t0k3nvalue", KEY, "alice:"), line


# -- 4a: --max-time bounds the whole reply, headers included -----------------------------------


@pytest.mark.invariant
@pytest.mark.parametrize("backend", ["ollama", "openai"])
@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_max_time_bounds_response_headers_that_never_end(
    fake_ollama, ore_env, backend, stream
) -> None:
    with FakeOpenAI() as server:
        env = dict(ore_env)
        if backend == "openai":
            server.fault = "drip-headers"
            env |= {"ORE_BACKEND": "openai", "ORE_BASE_URL": server.url}
        else:
            fake_ollama.drip_headers = 0.2  # a byte every 0.2 s: --timeout never fires
        started = time.monotonic()
        result = run_ore(
            stream,
            "--max-time",
            "2",
            "--timeout",
            "20",
            "-m",
            MODEL,
            "--save-session",
            "s",
            "hi",
            env=env,
        )
        took = time.monotonic() - started
    line = one_line_error(result)
    assert "longer than 2 s" in line and "--max-time" in line, line
    assert took < 12, f"held {took:.1f} s past a 2 s limit"
    session = Path(env["ORE_HOME"]) / "sessions" / "s.json"
    saved = json.loads(session.read_text(encoding="utf-8"))["messages"] if session.exists() else []
    assert saved == []


# -- 10: NaN counts from Ollama are dropped, the answer stands ---------------------------------


@pytest.mark.invariant
def test_nan_counts_from_ollama_are_left_out_and_the_answer_stands(fake_ollama, ore_env) -> None:
    fake_ollama.nan_counts = True
    result = run_ore("--json", "-m", MODEL, "hi", env=ore_env)
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["content"] == "echo: hi"
    for count in ("prompt_eval_count", "eval_count", "total_duration", "eval_duration"):
        assert count not in shown["metadata"], count
    assert shown["metadata"]["load_duration"] == 2_154_458  # the finite counts are kept
    streamed = run_ore("--stream", "-m", MODEL, "--save-session", "s", "hi", env=ore_env)
    assert streamed.returncode == 0, streamed.stderr
    assert streamed.stdout.strip() == "echo: hi"
