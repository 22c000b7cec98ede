"""A reply body as ORE holds it, before any reader sees it: unpacked in bounded pieces when a
server compressed it although ORE asked it not to (so `--max-size` counts what ORE holds, and a
gzip bomb stops at the limit), and with every byte that is not UTF-8 made U+FFFD, streamed or
not, in both backends (as httpx's line reader already did for streams).

Pure byte iterators, no httpx: `ore.backends.base` chains them on every reply body.
"""

from __future__ import annotations

import codecs
import zlib
from collections.abc import Iterator, Sequence

__all__ = ["PIECE", "UnreadableBody", "unpacked", "valid_utf8"]

#: The most bytes one piece of an unpacked body holds: the counter sees each piece, so memory
#: stays within `--max-size` and one piece, however far a few bytes unpack.
PIECE = 64 * 1024

#: `Content-Encoding` values ORE unpacks, and the zlib window bits of each.
_WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


class UnreadableBody(Exception):
    """The body cannot be read as sent; `what` says how, in a few words ("a gzip body that
    does not decompress"), for the backend's one line."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def unpacked(chunks: Iterator[bytes], encodings: Sequence[str]) -> Iterator[bytes]:
    """`chunks` decoded from the `Content-Encoding` list `encodings` (in the order the server
    applied them; `identity` ignored), in pieces of at most `PIECE` bytes. An encoding ORE
    cannot unpack (br, zstd, compress) is refused: ORE asked for none."""
    names = [e for e in (v.strip().lower() for v in encodings) if e and e != "identity"]
    for name in names:
        if name not in _WBITS:
            raise UnreadableBody(f"a reply in an encoding ORE did not ask for ({name[:20]})")
    for name in reversed(names):
        chunks = _inflate(chunks, name)
    return chunks


def _inflate(chunks: Iterator[bytes], name: str) -> Iterator[bytes]:
    wbits = _WBITS[name]
    inflater = zlib.decompressobj(wbits)
    started = False
    held = b""  # the first byte of what follows a gzip member, until the second comes
    seen = b""  # a deflate body's first bytes, until they show whether zlib's header leads them
    produced = False
    for chunk in chunks:
        data = held + chunk
        held = b""
        if wbits > 0 and name == "deflate" and len(seen) < PIECE:
            seen += chunk  # a header cut across tiny chunks fails only later: read it again raw
        while True:
            if inflater.eof and data:
                # After the end, only another gzip member may follow (RFC 1952): anything
                # else would pile up in zlib's `unused_data`, uncounted, as long as it came.
                if len(data) == 1 and data == _GZIP_MAGIC[:1] and wbits & 16:
                    held = data
                    break
                if not (wbits & 16 and data.startswith(_GZIP_MAGIC)):
                    raise UnreadableBody(f"a {name} body with more after its end")
                inflater = zlib.decompressobj(wbits)
            try:
                out = inflater.decompress(data, PIECE)
            except zlib.error:
                if name == "deflate" and wbits > 0 and not produced and len(seen) < PIECE:
                    # Some servers send raw deflate, without zlib's header: read it so.
                    wbits = -zlib.MAX_WBITS
                    inflater = zlib.decompressobj(wbits)
                    data = seen
                    continue
                raise UnreadableBody(f"a {name} body that does not decompress") from None
            started = True
            produced = produced or bool(out)
            if out:
                yield out
            data = inflater.unused_data if inflater.eof else inflater.unconsumed_tail
            if not data and len(out) < PIECE:
                break
    try:
        tail = inflater.flush()
    except zlib.error:
        tail = b""
    if held or (started and not inflater.eof):  # cut short: what came is not the whole body
        raise UnreadableBody(f"a {name} body that does not decompress")
    if tail:
        yield tail


#: How a gzip member begins.
_GZIP_MAGIC = b"\x1f\x8b"


def valid_utf8(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """`chunks` with every byte sequence that is not UTF-8 replaced by U+FFFD (a character
    split between two chunks is kept whole); ASCII chunks pass untouched."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    for chunk in chunks:
        if chunk.isascii() and not decoder.getstate()[0]:
            yield chunk
        else:
            yield decoder.decode(chunk).encode("utf-8")
    rest = decoder.decode(b"", final=True)
    if rest:
        yield rest.encode("utf-8")
