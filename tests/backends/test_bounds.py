"""Where a backend may send a credential (`route`, the one rule), the scrubber's URL
credentials, redirects never followed, and the deadline held on every socket of a client,
proxies' included (`ReplyBounds.install` reaches into httpx: this fails if httpx moves it)."""

from __future__ import annotations

import pytest

from ore.backends.base import DEFAULT_LIMITS, ReplyBounds, _bounded_network
from ore.backends.ollama import OllamaBackend
from ore.backends.openai import OpenAIBackend
from ore.backends.secrets import scrub, url_secrets
from ore.backends.select import Route, choose_backend, destination, route
from ore.errors import ArtifactError

KEY = "sk-bounds-0123456789"


@pytest.mark.parametrize(
    ("name", "url", "env", "recorded", "expected"),
    [
        (None, None, {}, None, Route("ollama", None, True)),
        (None, None, {}, ("ollama", "http://a:1"), Route("ollama", "http://a:1", False)),
        (None, None, {"OLLAMA_HOST": "h:2"}, ("ollama", "http://a:1"), Route("ollama", None, True)),
        (None, None, {}, ("openai", "http://a:1/v1"), Route("openai", "http://a:1/v1", False)),
        (
            None,
            None,
            {"ORE_BASE_URL": "http://mine/v1"},
            ("openai", None),
            Route("openai", "http://mine/v1", True),
        ),
        ("openai", None, {}, ("openai", None), Route("openai", None, True)),
        (None, None, {"ORE_BACKEND": "openai"}, ("openai", None), Route("openai", None, True)),
        (
            "deepseek",
            None,
            {},
            ("deepseek", None),
            Route("deepseek", "https://api.deepseek.com", True),
        ),
        ("openai", None, {}, ("deepseek", "http://a:1"), Route("openai", None, True)),
        ("ollama", None, {}, ("deepseek", None), Route("ollama", None, True)),
    ],
)
def test_the_one_rule_for_where_a_turn_goes(name, url, env, recorded, expected) -> None:
    rec_name, rec_url = recorded or (None, None)
    assert route(name, url, env=env, recorded_name=rec_name, recorded_url=rec_url) == expected


@pytest.mark.invariant
@pytest.mark.parametrize(
    ("recorded", "flag"),
    [
        ("openai", "--backend openai"),
        ("deepseek", "--backend deepseek"),
        ("DeepSeek", "--backend deepseek"),
    ],
)
def test_an_artifact_alone_never_chooses_a_built_in_address_that_gets_a_key(recorded, flag) -> None:
    env = {"OPENAI_API_KEY": KEY, "ORE_API_KEY": KEY, "DEEPSEEK_API_KEY": KEY}
    with pytest.raises(ArtifactError) as caught:
        choose_backend(env=env, recorded_name=recorded, recorded_url=None)
    assert flag in caught.value.message and "\n" not in caught.value.message
    with pytest.raises(ArtifactError):
        destination(env=env, recorded_name=recorded)


def test_url_secrets_are_the_user_the_password_and_every_query_value() -> None:
    found = url_secrets("https://al%40ice:p%2Fss@h:1/v1?api-key=k1234&token=t%2B9999#frag")
    for secret in ("al%40ice", "al@ice", "p%2Fss", "p/ss", "al%40ice:p%2Fss", "k1234", "t+9999"):
        assert secret in found
    assert url_secrets("not a url?key=zzzz9") and "zzzz9" in url_secrets("not a url?key=zzzz9")
    assert url_secrets(None) == ()


def test_one_scrubber_covers_every_form_longest_first() -> None:
    import base64

    basic = base64.b64encode(b"alice:pa55w0rd!").decode()
    text = f"alice:pa55w0rd! {basic} pa55w0rd%21 {KEY} key=qk-1"
    secrets = (KEY, *url_secrets("http://alice:pa55w0rd!@h/?key=qk-1"))
    scrubbed = scrub(text, secrets)
    for leaked in ("pa55w0rd", basic.rstrip("="), KEY, "alice", "qk-1"):
        assert leaked not in scrubbed, scrubbed


@pytest.mark.invariant
@pytest.mark.parametrize("address", ["http://127.0.0.1:9", "https://127.0.0.1:9"])
@pytest.mark.parametrize("proxy", [None, "HTTPS_PROXY", "ALL_PROXY", "HTTP_PROXY"])
def test_no_client_follows_redirects_whatever_the_scheme_or_proxy(monkeypatch, address, proxy):
    for name in (
        "HTTPS_PROXY",
        "ALL_PROXY",
        "HTTP_PROXY",
        "https_proxy",
        "all_proxy",
        "http_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    if proxy:
        monkeypatch.setenv(proxy, "http://127.0.0.1:9")
    with OllamaBackend(address) as ollama, OpenAIBackend(f"{address}/v1") as openai:
        clients = [ollama._client._client, openai._client]
        assert [c.follow_redirects for c in clients] == [False, False]


@pytest.mark.parametrize("proxy", ["HTTPS_PROXY", "ALL_PROXY"])
def test_the_deadline_is_installed_on_every_transport_proxies_included(monkeypatch, proxy) -> None:
    monkeypatch.setenv(proxy, "http://127.0.0.1:9")
    network = _bounded_network()
    with OllamaBackend("https://127.0.0.1:9") as ollama, OpenAIBackend("https://h:1/v1") as openai:
        for client in (ollama._client._client, openai._client):
            transports = [client._transport, *(t for t in client._mounts.values() if t)]
            assert len(transports) >= 2  # the direct one and the proxy's
            for transport in transports:
                assert isinstance(transport._pool._network_backend, network)


def test_the_deadline_is_per_request_and_cuts_each_wait() -> None:
    bounds = ReplyBounds(DEFAULT_LIMITS)
    assert bounds.bound(5.0) == 5.0  # no request yet: nothing to cut
    bounds.start()
    assert bounds.bound(None) is not None and bounds.bound(5.0) == 5.0
    bounds._local.deadline = 0.0
    with pytest.raises(Exception, match="--max-time"):
        bounds.bound(5.0)
