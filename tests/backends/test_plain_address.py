"""`sanitize_url` prints an address with nothing to drop without parsing it (a dry run need not
import `urllib.parse`): the result is always what parsing gives."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from hypothesis import given, settings
from hypothesis import strategies as st

from ore.backends.secrets import sanitize_url


def _parsed(url: str) -> str:
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return "(an address that cannot be parsed)"
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="htps:/.-_~019aHTP[]@?#%; \t", max_size=30))
def test_the_plain_path_gives_what_parsing_gives(tail: str) -> None:
    for url in (tail, f"http://{tail}", f"https://{tail}", f" http://{tail}/ "):
        assert sanitize_url(url) == _parsed(url)


def test_common_addresses() -> None:
    assert sanitize_url("http://127.0.0.1:11434") == "http://127.0.0.1:11434"
    assert sanitize_url("https://api.deepseek.com/v1/") == "https://api.deepseek.com/v1"
    assert sanitize_url("http://u:p@h:1/v1?key=s#f") == "http://h:1/v1"
