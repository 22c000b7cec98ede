"""`ore.backends.body`: a compressed body unpacked in bounded pieces, whatever it unpacks to,
and bytes that are not UTF-8 made U+FFFD, a character split between chunks kept whole."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator

import pytest

from ore.backends.body import PIECE, UnreadableBody, unpacked, valid_utf8


def pieces(data: bytes, size: int = 1000) -> Iterator[bytes]:
    return iter([data[i : i + size] for i in range(0, len(data), size)])


def test_a_bomb_unpacks_in_pieces_no_larger_than_piece() -> None:
    bomb = gzip.compress(b"\n" * (8 * PIECE))
    out = unpacked(iter([bomb]), ["gzip"])
    first = next(out)
    assert len(first) <= PIECE
    assert sum(len(p) for p in out) + len(first) == 8 * PIECE


@pytest.mark.parametrize(
    ("encodings", "pack"),
    [
        (["gzip"], gzip.compress),
        (["x-gzip"], gzip.compress),
        (["deflate"], zlib.compress),
        (["deflate"], lambda b: zlib.compress(b)[2:-4]),  # raw deflate, no zlib header
        (["identity"], lambda b: b),
        (["deflate", "gzip"], lambda b: gzip.compress(zlib.compress(b))),
    ],
)
def test_each_encoding_unpacks_to_the_body(encodings, pack) -> None:
    body = b'{"message": "hello"}' * 500
    assert b"".join(unpacked(pieces(pack(body)), encodings)) == body


@pytest.mark.parametrize(
    ("encodings", "data", "said"),
    [
        (["br"], b"x", "encoding ORE did not ask for (br)"),
        (["gzip", "zstd"], b"x", "(zstd)"),
        (["gzip"], b"\x1f\x8b\x08\x00garbage", "a gzip body that does not decompress"),
    ],
)
def test_what_cannot_be_unpacked_is_said_in_a_few_words(encodings, data, said) -> None:
    with pytest.raises(UnreadableBody) as info:
        b"".join(unpacked(iter([data]), encodings))
    assert said in info.value.what


def test_bytes_that_are_not_utf8_become_replacement_characters() -> None:
    text = "é😀日".encode()
    split = [text[:1], text[1:3], text[3:] + b"\xff ok", b"\xc3"]
    assert b"".join(valid_utf8(iter(split))).decode() == "é😀日\ufffd ok\ufffd"
    ascii_only = [b"abc", b"def"]
    assert list(valid_utf8(iter(ascii_only))) == ascii_only


def test_what_follows_a_compressed_body_is_refused_never_held() -> None:
    """After a member's end zlib keeps what follows in `unused_data`, uncounted: a small gzip
    body and then endless bytes grew memory as long as they came (393 MB for 192 MB sent)."""
    sent = [0]

    def endless() -> Iterator[bytes]:
        yield gzip.compress(b'{"a": 1}\n')
        while sent[0] < 1000:
            sent[0] += 1
            yield b"\0" * 65536

    with pytest.raises(UnreadableBody, match="more after its end"):
        list(unpacked(endless(), ["gzip"]))
    assert sent[0] <= 1  # refused at the first bytes after the end, not read on
    with pytest.raises(UnreadableBody, match="more after its end"):
        list(unpacked(iter([zlib.compress(b"a") + b"junk"]), ["deflate"]))


def test_gzip_members_one_after_another_are_one_body_however_they_are_cut() -> None:
    two = gzip.compress(b"one\n") + gzip.compress(b"two\n")
    assert b"".join(unpacked(iter([two]), ["gzip"])) == b"one\ntwo\n"
    one_byte_each = iter([two[i : i + 1] for i in range(len(two))])  # the magic cut in two
    assert b"".join(unpacked(one_byte_each, ["gzip"])) == b"one\ntwo\n"
    with pytest.raises(UnreadableBody):  # half a magic, and then nothing
        list(unpacked(iter([two + b"\x1f"]), ["gzip"]))


def test_raw_deflate_is_read_however_small_its_first_pieces_are() -> None:
    """Whether zlib's header leads a deflate body shows only after its first bytes: a raw body
    sent a byte at a time is read again raw from its start, not refused."""
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    raw = packer.compress(b"raw body " * 50) + packer.flush()
    one_byte_each = iter([raw[i : i + 1] for i in range(len(raw))])
    assert b"".join(unpacked(one_byte_each, ["deflate"])) == b"raw body " * 50
