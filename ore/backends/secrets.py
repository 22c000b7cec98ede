"""What of an address or a server's words may be printed: addresses without user, password or
query; every echo of a secret (an API key, a URL's credentials) scrubbed in every form a server
could repeat it; one line, cut short. Every line that quotes a server passes through here."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

__all__ = ["MAX_DETAIL", "sanitize_url", "scrub", "shorten", "url_secrets", "without_credentials"]

#: The most characters of a server's own words quoted in one error line.
MAX_DETAIL = 300


#: An address with nothing to drop (no userinfo, query or fragment, no brackets or escapes):
#: `sanitize_url` gives it back without its trailing slashes, as parsing it would, without
#: importing `urllib.parse` (2.5 ms with `ipaddress`, of a dry run that shows the address).
_PLAIN_URL = r"https?://[A-Za-z0-9.:-]+(?:/[A-Za-z0-9._~/-]*)?\Z"


def sanitize_url(url: str) -> str:
    """`url` fit to print: userinfo, query and fragment dropped (credentials hide in all three)."""
    if re.match(_PLAIN_URL, url.strip()):
        return url.strip().rstrip("/")
    try:
        from urllib.parse import urlsplit

        parts = urlsplit(url.strip())
    except ValueError:
        return "(an address that cannot be parsed)"
    netloc = parts.netloc.rpartition("@")[2]
    from urllib.parse import urlunsplit

    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


_USERINFO = re.compile(r"^((?:[A-Za-z][A-Za-z0-9+.-]*://)?)[^/?#]*@")


def without_credentials(raw: str) -> str:
    """An address as given, even one that does not parse, without userinfo, query or fragment:
    for quoting a bad address back to the user."""
    return re.split(r"[?#]", _USERINFO.sub(r"\1", raw), maxsplit=1)[0]


def url_secrets(url: str | None) -> tuple[str, ...]:
    """The credentials an address can carry, for `scrub`: its user, its password, the two
    together (as Basic auth would send them) and every query value (`?api-key=`, `?key=`,
    `?token=`, ...), each as written and percent-decoded."""
    if not url:
        return ()
    from urllib.parse import parse_qsl, unquote, urlsplit  # here: a dry run never pays for it

    raw = url.strip().strip("\"'")
    try:
        parts = urlsplit(raw if "://" in raw else f"http://{raw}")
    except ValueError:
        parts = None
    found: list[str] = []
    if parts is not None:
        userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
        query = [value for _, value in parse_qsl(parts.query, keep_blank_values=True)]
        query += [p.partition("=")[2] for p in re.split(r"[&;]", parts.query)]
        query += [parts.fragment]
    else:  # an address that does not parse: its userinfo and query, as far as they go
        userinfo = raw.rpartition("@")[0].rpartition("/")[2] if "@" in raw else ""
        query = re.split(r"[?#&;=]", raw.partition("?")[2])
    user, _, password = userinfo.partition(":")
    for value in (userinfo, user, password, *query):
        found += [value, unquote(value)]
    return tuple(dict.fromkeys(v for v in found if v))


def _variants(secret: str) -> tuple[str, ...]:
    """The forms in which a server could echo `secret`: as is, URL-encoded (also with `+` for
    a space), JSON-escaped, and base64 (as in Basic auth)."""
    import base64
    from urllib.parse import quote, quote_plus

    return (
        secret,
        quote(secret, safe=""),
        quote_plus(secret, safe=""),
        json.dumps(secret)[1:-1],
        base64.b64encode(secret.encode()).decode().rstrip("="),
    )


def scrub(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret (of four characters or more: an API key, a URL's user,
    password or query values from `url_secrets`), in every form a server could echo it,
    replaced by `***`; the longest forms first, so no part of a longer one is left. Scrub
    before cutting: a cut could leave part of a secret. The one scrubber of every message that
    quotes a server."""
    forms = {form for secret in secrets if len(secret) >= 4 for form in _variants(secret)}
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, "***")
    return text


def shorten(text: str, limit: int = MAX_DETAIL) -> str:
    """`text` on one line, cut at `limit` characters (call it after `scrub`)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
