"""Checks on static-fixtures/: exact sizes, SHA256SUMS, and structural validity.

Stdlib only. Each validator takes bytes so the tests can also prove that a
damaged copy (truncated, bit-flipped) is rejected.
"""

import hashlib
import struct
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "static-fixtures"
SIZES = {"index.html": 692_224, "big.jpg": 1_677_722, "small.png": 12_288}


def read(name):
    return (FIXTURES / name).read_bytes()


def manifest():
    entries = {}
    for line in (FIXTURES / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split(None, 1)
        entries[name.lstrip("*")] = digest
    return entries


# ----------------------------------------------------------- validators ---
def validate_png(data):
    """Raise AssertionError unless data is a well-formed non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "bad PNG signature"
    pos, chunks = 8, []
    while pos < len(data):
        assert pos + 12 <= len(data), f"truncated chunk header at {pos}"
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        ctype = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        assert len(body) == length, f"truncated {ctype!r} chunk"
        assert pos + 12 + length <= len(data), f"truncated CRC of {ctype!r}"
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert zlib.crc32(ctype + body) & 0xFFFFFFFF == crc, f"bad CRC in {ctype!r} chunk"
        chunks.append((ctype, body))
        pos += 12 + length
    types = [t for t, _ in chunks]
    assert types[0] == b"IHDR", "IHDR is not the first chunk"
    assert types[-1] == b"IEND", "IEND is not the last chunk"
    assert types.count(b"IEND") == 1 and chunks[-1][1] == b""
    w, h, depth, ctype_, comp, filt, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert w > 0 and h > 0 and comp == 0 and filt == 0 and interlace == 0
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ctype_]
    idat = b"".join(b for t, b in chunks if t == b"IDAT")
    assert idat, "no IDAT"
    raw = zlib.decompress(idat)
    row = 1 + (w * channels * depth + 7) // 8
    assert len(raw) == h * row, f"IDAT inflates to {len(raw)} bytes, expected {h * row}"
    assert all(raw[y * row] <= 4 for y in range(h)), "bad filter type byte"
    return w, h


def validate_jpeg(data):
    """Walk the JPEG markers: SOI, ..., SOF0, DHT/DQT, SOS, entropy data, EOI at the very end."""
    assert data[:2] == b"\xff\xd8", "missing SOI"
    pos, seen, sof = 2, [], None
    while True:
        assert pos + 4 <= len(data), "truncated before SOS"
        assert data[pos] == 0xFF, f"expected a marker at {pos}"
        marker = data[pos + 1]
        assert marker not in (0xD8, 0xD9), f"unexpected marker {marker:#x} before SOS"
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        assert length >= 2 and pos + 2 + length <= len(data), f"segment {marker:#x} overruns file"
        seen.append(marker)
        if marker == 0xC0:
            _, h, w, ncomp = struct.unpack(">BHHB", data[pos + 4 : pos + 10])
            sof = (w, h, ncomp)
        pos += 2 + length
        if marker == 0xDA:
            break
    assert sof is not None, "no SOF0 (baseline) frame header before SOS"
    assert 0xC4 in seen and 0xDB in seen, "missing DHT or DQT"
    # Entropy-coded data: 0xFF is followed only by 0x00 (stuffing) or RST0-7, until EOI.
    while True:
        nxt = data.find(b"\xff", pos)
        assert nxt != -1 and nxt + 1 < len(data), "no EOI after scan"
        m = data[nxt + 1]
        if m == 0x00 or 0xD0 <= m <= 0xD7:
            pos = nxt + 2
            continue
        assert m == 0xD9, f"unexpected marker {m:#x} inside scan"
        assert nxt + 2 == len(data), "bytes after EOI"
        return sof


class _Balance(HTMLParser):
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.seen = [], [], set()

    def handle_starttag(self, tag, attrs):
        self.seen.add(tag)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def validate_html(data):
    assert data.startswith(b"<!DOCTYPE html>"), "missing <!DOCTYPE html>"
    text = data.decode("utf-8")
    p = _Balance()
    p.feed(text)
    p.close()
    assert not p.errors, p.errors[:5]
    assert not p.stack, f"unclosed tags: {p.stack[-5:]}"
    for tag in ("html", "head", "title", "body", "h1", "p", "table"):
        assert tag in p.seen, f"no <{tag}>"
    return p.seen


# ---------------------------------------------------------------- tests ---
@pytest.mark.parametrize("name,size", SIZES.items())
def test_exact_size(name, size):
    assert (FIXTURES / name).stat().st_size == size


def test_manifest_lists_exactly_the_fixtures():
    assert set(manifest()) == set(SIZES)


@pytest.mark.parametrize("name", SIZES)
def test_checksum_matches_manifest(name):
    assert hashlib.sha256(read(name)).hexdigest() == manifest()[name]


def test_png_is_valid():
    assert validate_png(read("small.png")) == (64, 48)


def test_jpeg_is_valid():
    w, h, ncomp = validate_jpeg(read("big.jpg"))
    assert (w, h, ncomp) == (1600, 1200, 3)


def test_html_is_valid():
    data = read("index.html")
    validate_html(data)
    assert b'src="small.png"' in data and b'src="big.jpg"' in data


# The validators must reject damaged copies, otherwise the tests above prove nothing.
def _flip(data, at):
    b = bytearray(data)
    b[at] ^= 0x01
    return bytes(b)


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d[:-1],  # truncated by one byte
        lambda d: d[: len(d) // 2],  # truncated in the middle
        lambda d: _flip(d, 100),  # bit flip inside IDAT
        lambda d: _flip(d, 0),  # bad signature
        lambda d: d + b"\0",  # garbage after IEND
    ],
)
def test_png_validator_rejects_damage(damage):
    with pytest.raises(Exception):
        validate_png(damage(read("small.png")))


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d[:-1],  # EOI cut off
        lambda d: d[: len(d) // 2],  # truncated in the scan
        lambda d: d[:1000],  # truncated in the header segments
        lambda d: d + b"\0",  # garbage after EOI
        lambda d: d[2:],  # no SOI
    ],
)
def test_jpeg_validator_rejects_damage(damage):
    with pytest.raises(AssertionError):
        validate_jpeg(damage(read("big.jpg")))


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d[: len(d) // 2],  # truncated: unclosed tags
        lambda d: d.replace(b"</body>", b""),
        lambda d: d[15:],  # no doctype
        lambda d: d.replace(b"<title>", b"<title>\xff"),  # not UTF-8
    ],
)
def test_html_validator_rejects_damage(damage):
    with pytest.raises((AssertionError, UnicodeDecodeError)):
        validate_html(damage(read("index.html")))
