#!/usr/bin/env python3
"""Generate the crossbench static fixtures: index.html, big.jpg, small.png.

Pure Python standard library only, integer arithmetic only, fixed seed, so the
output is byte-identical on any machine and any Python 3.9+:

  * small.png  - 64x48 RGB image; the zlib stream is written by hand with
                 *stored* deflate blocks (no dependency on the zlib library's
                 compressor version), padded to size with a tEXt chunk.
  * big.jpg    - 1600x1200 baseline JPEG (YCbCr 4:2:0, standard Annex K
                 quantisation/Huffman tables, quality 90) from a small encoder
                 below using an integer DCT, padded to size with COM segments
                 placed right after APP0 (nothing is ever appended after EOI).
  * index.html - HTML5 page (ASCII only), padded to size with a trailing
                 HTML comment inside <body>.

Usage:
  python3 static-fixtures/generate.py          # write the three files + SHA256SUMS
  python3 static-fixtures/generate.py --check  # verify files on disk against SHA256SUMS
"""

import hashlib
import random
import struct
import sys
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20240601
MANIFEST = "SHA256SUMS"
SIZES = {"index.html": 692_224, "big.jpg": 1_677_722, "small.png": 12_288}


def rng_for(name):
    # Only getrandbits() is used: its output is stable across Python versions.
    return random.Random(f"{SEED}:{name}")


# --------------------------------------------------------------------- PNG ---
def png_chunk(ctype, data):
    body = ctype + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def zlib_stored(raw):
    """A zlib stream made only of stored deflate blocks (deterministic everywhere)."""
    out = bytearray(b"\x78\x01")
    pos = 0
    while True:
        block = raw[pos : pos + 65535]
        pos += len(block)
        final = 1 if pos >= len(raw) else 0
        out += bytes([final]) + struct.pack("<HH", len(block), len(block) ^ 0xFFFF) + block
        if final:
            break
    return bytes(out + struct.pack(">I", zlib.adler32(raw) & 0xFFFFFFFF))


def make_png(size):
    w, h = 64, 48
    rng = rng_for("png")
    noise = rng.getrandbits(8 * w * h).to_bytes(w * h, "little")
    raw = bytearray()
    for y in range(h):
        raw.append(0)  # filter type None
        for x in range(w):
            n = noise[y * w + x] % 24 - 12
            dx, dy = x - 40, y - 18
            if dx * dx + dy * dy < 100:  # a sun-ish disk
                r, g, b = 250, 200, 40
            elif y > 32 + (x * 3) // 16 - 6:  # a sloped "hill"
                r, g, b = 40 + x, 140 + y, 50
            else:  # sky gradient
                r, g, b = 60 + y * 2, 120 + y * 2, 230 - y
            raw += bytes(max(0, min(255, c + n)) for c in (r, g, b))
    sig = b"\x89PNG\r\n\x1a\n"
    ihdr = png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    idat = png_chunk(b"IDAT", zlib_stored(bytes(raw)))
    iend = png_chunk(b"IEND", b"")
    base = len(sig) + len(ihdr) + len(idat) + len(iend)
    key = b"Comment\x00"
    pad = size - base - 12 - len(key)
    if pad < 0:
        raise SystemExit(f"small.png: base image already {base} bytes > {size}")
    filler = (b"crossbench static fixture small.png; padding to a fixed size. " * (pad // 60 + 1))[:pad]
    text = png_chunk(b"tEXt", key + filler)
    data = sig + ihdr + idat + text + iend
    assert len(data) == size, len(data)
    return data


# -------------------------------------------------------------------- JPEG ---
ZIGZAG = sorted(range(64), key=lambda i: (i // 8 + i % 8, (i % 8) if (i // 8 + i % 8) % 2 == 0 else (i // 8)))

Q_LUM = [
    16,
    11,
    10,
    16,
    24,
    40,
    51,
    61,
    12,
    12,
    14,
    19,
    26,
    58,
    60,
    55,
    14,
    13,
    16,
    24,
    40,
    57,
    69,
    56,
    14,
    17,
    22,
    29,
    51,
    87,
    80,
    62,
    18,
    22,
    37,
    56,
    68,
    109,
    103,
    77,
    24,
    35,
    55,
    64,
    81,
    104,
    113,
    92,
    49,
    64,
    78,
    87,
    103,
    121,
    120,
    101,
    72,
    92,
    95,
    98,
    112,
    100,
    103,
    99,
]
Q_CHR = [
    17,
    18,
    24,
    47,
    99,
    99,
    99,
    99,
    18,
    21,
    26,
    66,
    99,
    99,
    99,
    99,
    24,
    26,
    56,
    99,
    99,
    99,
    99,
    99,
    47,
    66,
    99,
    99,
    99,
    99,
    99,
    99,
] + [99] * 32

DC_LUM_BITS = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
DC_CHR_BITS = [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
DC_VALS = list(range(12))
AC_LUM_BITS = [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7D]
AC_LUM_VALS = bytes.fromhex(
    "01020300041105122131410613516107227114328191a1082342b1c11552d1f0"
    "24336272"
    "82090a161718191a25262728292a3435363738393a434445464748494a"
    "535455565758595a636465666768696a737475767778797a838485868788898a"
    "92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6"
    "c7c8c9cad2d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9fa"
)
AC_CHR_BITS = [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77]
AC_CHR_VALS = bytes.fromhex(
    "000102031104052131061241510761711322328108144291a1b1c109233352f0"
    "156272d10a162434e125f11718191a262728292a35363738393a434445464748"
    "494a535455565758595a636465666768696a737475767778797a828384858687"
    "88898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3"
    "c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae2e3e4e5e6e7e8e9eaf2f3f4f5f6f7f8f9fa"
)


def scaled_qtable(base, quality):
    scale = 5000 // quality if quality < 50 else 200 - 2 * quality
    return [max(1, min(255, (q * scale + 50) // 100)) for q in base]


def huff_codes(bits, vals):
    """Canonical Huffman codes (JPEG Annex C): symbol -> (code, length)."""
    codes, code, k = {}, 0, 0
    for length in range(1, 17):
        for _ in range(bits[length - 1]):
            codes[vals[k]] = (code, length)
            code += 1
            k += 1
        code <<= 1
    return codes


# Integer DCT basis: C[u][x] = round(2^12 * c(u)/2 * cos((2x+1)u*pi/16)), precomputed
# (hard-coded so no libm rounding difference can change the output).
DCT_SHIFT = 12
DCT_MAT = [
    [1448, 1448, 1448, 1448, 1448, 1448, 1448, 1448],
    [2009, 1703, 1138, 400, -400, -1138, -1703, -2009],
    [1892, 784, -784, -1892, -1892, -784, 784, 1892],
    [1703, -400, -2009, -1138, 1138, 2009, 400, -1703],
    [1448, -1448, -1448, 1448, 1448, -1448, -1448, 1448],
    [1138, -2009, 400, 1703, -1703, -400, 2009, -1138],
    [784, -1892, 1892, -784, -784, 1892, -1892, 784],
    [400, -1138, 1703, -2009, 2009, -1703, 1138, -400],
]


def fdct_quant(block, qdiv):
    """block: 64 level-shifted samples (row-major). Returns 64 quantised coeffs in zigzag order."""
    m = DCT_MAT
    rows = []
    for r in range(0, 64, 8):
        b0, b1, b2, b3, b4, b5, b6, b7 = block[r : r + 8]
        rows.append(
            [
                c0 * b0 + c1 * b1 + c2 * b2 + c3 * b3 + c4 * b4 + c5 * b5 + c6 * b6 + c7 * b7
                for c0, c1, c2, c3, c4, c5, c6, c7 in m
            ]
        )
    coef = [0] * 64
    for v in range(8):
        col = [rows[y][v] for y in range(8)]
        for u in range(8):
            c = m[u]
            s = (
                c[0] * col[0]
                + c[1] * col[1]
                + c[2] * col[2]
                + c[3] * col[3]
                + c[4] * col[4]
                + c[5] * col[5]
                + c[6] * col[6]
                + c[7] * col[7]
            )
            coef[u * 8 + v] = s  # scaled by 2^(2*DCT_SHIFT)
    out = []
    for i in ZIGZAG:
        d = qdiv[i]  # q << 24
        s = coef[i]
        out.append((s + d // 2) // d if s >= 0 else -((-s + d // 2) // d))
    return out


class BitWriter:
    def __init__(self):
        self.out = bytearray()
        self.acc = 0
        self.n = 0

    def write(self, code, length):
        self.acc = (self.acc << length) | code
        self.n += length
        while self.n >= 8:
            self.n -= 8
            byte = (self.acc >> self.n) & 0xFF
            self.out.append(byte)
            if byte == 0xFF:
                self.out.append(0)  # byte stuffing
        self.acc &= (1 << self.n) - 1

    def flush(self):
        if self.n:
            self.write((1 << (8 - self.n)) - 1, 8 - self.n)  # pad with 1-bits
        return bytes(self.out)


def encode_block(bw, coefs, prev_dc, dc_codes, ac_codes):
    def magnitude(v):
        n = abs(v).bit_length()
        return n, (v if v >= 0 else v + (1 << n) - 1)

    diff = coefs[0] - prev_dc
    n, bits = magnitude(diff)
    bw.write(*dc_codes[n])
    if n:
        bw.write(bits, n)
    run = 0
    for v in coefs[1:]:
        if v == 0:
            run += 1
            continue
        while run > 15:
            bw.write(*ac_codes[0xF0])
            run -= 16
        n, bits = magnitude(v)
        bw.write(*ac_codes[(run << 4) | n])
        bw.write(bits, n)
        run = 0
    if run:
        bw.write(*ac_codes[0x00])  # EOB
    return coefs[0]


def make_rgb(w, h):
    """A deterministic 'landscape': sky gradient, sun, hills, stripes, plus noise."""
    rng = rng_for("jpeg")
    noise = rng.getrandbits(8 * w * h).to_bytes(w * h, "little")
    pix = bytearray(3 * w * h)
    i = 0
    for y in range(h):
        for x in range(w):
            n = noise[i // 3] % 112 - 56
            dx, dy = x - 1150, y - 330
            d2 = dx * dx + dy * dy
            hill = 760 + ((x - 500) * (x - 500)) // 2600 - 120
            hill2 = 900 + ((x - 1300) * (x - 1300)) // 3000 - 160
            if d2 < 150 * 150:
                r, g, b = 255, 220 - d2 // 400, 60
            elif y > hill2:
                stripe = 40 if ((x + 2 * y) // 24) % 2 else 0
                r, g, b = 60 + stripe, 110 + (y - 900) // 4, 40 + stripe // 2
            elif y > hill:
                r, g, b = 30 + x // 20, 150 - (y - 640) // 6, 60
            else:
                r, g, b = 70 + y // 6, 130 + y // 8, 250 - y // 10
            pix[i] = max(0, min(255, r + n))
            pix[i + 1] = max(0, min(255, g + n))
            pix[i + 2] = max(0, min(255, b - n))
            i += 3
    return pix


def make_jpeg(size, w=1600, h=1200, quality=90):
    assert w % 16 == 0 and h % 16 == 0
    rgb = make_rgb(w, h)
    # RGB -> YCbCr (JFIF), 16.16 fixed point; chroma subsampled 2x2 (4:2:0) by averaging.
    Y = [0] * (w * h)
    cw, ch = w // 2, h // 2
    cb_sum = [0] * (cw * ch)
    cr_sum = [0] * (cw * ch)
    for y in range(h):
        base_c = (y // 2) * cw
        for x in range(w):
            p = 3 * (y * w + x)
            r, g, b = rgb[p], rgb[p + 1], rgb[p + 2]
            Y[y * w + x] = (19595 * r + 38470 * g + 7471 * b + 32768) >> 16
            c = base_c + x // 2
            cb_sum[c] += -11059 * r - 21709 * g + 32768 * b
            cr_sum[c] += 32768 * r - 27439 * g - 5329 * b
    Cb = [min(255, ((s + 2 * 32768) >> 18) + 128) for s in cb_sum]
    Cr = [min(255, ((s + 2 * 32768) >> 18) + 128) for s in cr_sum]

    ql = scaled_qtable(Q_LUM, quality)
    qc = scaled_qtable(Q_CHR, quality)
    qdl = [q << (2 * DCT_SHIFT) for q in ql]
    qdc = [q << (2 * DCT_SHIFT) for q in qc]
    dcl, acl = huff_codes(DC_LUM_BITS, DC_VALS), huff_codes(AC_LUM_BITS, AC_LUM_VALS)
    dcc, acc = huff_codes(DC_CHR_BITS, DC_VALS), huff_codes(AC_CHR_BITS, AC_CHR_VALS)

    def block_at(plane, pw, bx, by):
        out = []
        for yy in range(by, by + 8):
            o = yy * pw + bx
            out.extend(v - 128 for v in plane[o : o + 8])
        return out

    bw = BitWriter()
    pdy = pdcb = pdcr = 0
    for my in range(0, h, 16):
        for mx in range(0, w, 16):
            for oy in (0, 8):
                for ox in (0, 8):
                    pdy = encode_block(bw, fdct_quant(block_at(Y, w, mx + ox, my + oy), qdl), pdy, dcl, acl)
            cx, cy = mx // 2, my // 2
            pdcb = encode_block(bw, fdct_quant(block_at(Cb, cw, cx, cy), qdc), pdcb, dcc, acc)
            pdcr = encode_block(bw, fdct_quant(block_at(Cr, cw, cx, cy), qdc), pdcr, dcc, acc)
    scan = bw.flush()

    def seg(marker, payload):
        return b"\xff" + bytes([marker]) + struct.pack(">H", len(payload) + 2) + payload

    app0 = seg(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
    dqt = seg(0xDB, bytes([0]) + bytes(ql[i] for i in ZIGZAG) + bytes([1]) + bytes(qc[i] for i in ZIGZAG))
    sof0 = seg(0xC0, struct.pack(">BHHB", 8, h, w, 3) + bytes([1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]))
    dht = seg(
        0xC4,
        bytes([0x00] + DC_LUM_BITS)
        + bytes(DC_VALS)
        + bytes([0x10] + AC_LUM_BITS)
        + AC_LUM_VALS
        + bytes([0x01] + DC_CHR_BITS)
        + bytes(DC_VALS)
        + bytes([0x11] + AC_CHR_BITS)
        + AC_CHR_VALS,
    )
    sos = seg(0xDA, bytes([3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0]))
    soi, eoi = b"\xff\xd8", b"\xff\xd9"
    body = dqt + sof0 + dht + sos + scan + eoi

    # Pad with COM segments right after APP0: each is 4 bytes overhead + <= 65533 payload.
    pad = size - (len(soi) + len(app0) + len(body))
    if pad < 0 or 0 < pad < 4:
        raise SystemExit(f"big.jpg: cannot pad {len(soi) + len(app0) + len(body)} bytes to {size}")
    coms = bytearray()
    nseg = -(-pad // 65537)
    text = b"crossbench static fixture big.jpg; COM padding to a fixed size. "
    for k in range(nseg):
        total = pad // nseg + (1 if k < pad % nseg else 0)
        payload = (text * (total // len(text) + 1))[: total - 4]
        coms += seg(0xFE, payload)
    data = soi + app0 + bytes(coms) + body
    assert len(data) == size, len(data)
    return data


# -------------------------------------------------------------------- HTML ---
WORDS = (
    "server request latency throughput worker thread event loop socket buffer "
    "kernel connection keepalive handler servlet tornado tomcat static file cache "
    "response header payload benchmark percentile median queue backlog core memory "
    "garbage collector heap coroutine async blocking pool client load generator "
    "measurement warmup steady state variance sample run host network byte"
).split()


def make_html(size):
    rng = rng_for("html")

    def pick(seq):
        return seq[rng.getrandbits(32) % len(seq)]

    def sentence():
        n = 8 + rng.getrandbits(4)
        s = " ".join(pick(WORDS) for _ in range(n))
        return s[0].upper() + s[1:] + "."

    def paragraph():
        return "<p>" + " ".join(sentence() for _ in range(3 + rng.getrandbits(2))) + "</p>\n"

    head = (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<title>crossbench static fixture</title>\n"
        "<style>body{font-family:sans-serif;max-width:60em;margin:auto;padding:1em}"
        "table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px}"
        "img{max-width:100%}</style>\n</head>\n<body>\n"
        "<header><h1>crossbench static fixture</h1>\n"
        "<p>A synthetic page served by both the Tomcat and the Tornado server.</p>\n"
        "<img src=\"small.png\" alt=\"small image\" width=\"64\" height=\"48\"></header>\n<main>\n"
    )
    tail_close = "</main>\n<footer><p>End of fixture.</p></footer>\n"
    end = "</body>\n</html>\n"
    parts = [head]
    length = len(head)
    budget = size - len(tail_close) - len(end) - 4096
    section = 0
    while True:
        section += 1
        chunk = [f"<section id=\"s{section}\">\n<h2>Section {section}: {pick(WORDS)} {pick(WORDS)}</h2>\n"]
        for _ in range(2 + rng.getrandbits(2)):
            chunk.append(paragraph())
        if section == 1:
            chunk.append(
                "<figure><img src=\"big.jpg\" alt=\"big image\" width=\"1600\" height=\"1200\">"
                "<figcaption>A large JPEG.</figcaption></figure>\n"
            )
        if section % 4 == 0:
            chunk.append(
                "<h3>Results table</h3>\n<table>\n<thead><tr><th>run</th><th>server</th>"
                "<th>p50 ms</th><th>p99 ms</th><th>req/s</th></tr></thead>\n<tbody>\n"
            )
            for row in range(8):
                p50 = 1 + rng.getrandbits(10)
                chunk.append(
                    f"<tr><td>{row + 1}</td><td>{pick(('tomcat', 'tornado'))}</td>"
                    f"<td>{p50 / 100:.2f}</td><td>{(p50 + rng.getrandbits(12)) / 100:.2f}</td>"
                    f"<td>{1000 + rng.getrandbits(15)}</td></tr>\n"
                )
            chunk.append("</tbody>\n</table>\n")
        chunk.append("</section>\n")
        text = "".join(chunk)
        if length + len(text) > budget:
            break
        parts.append(text)
        length += len(text)
    parts.append(tail_close)
    doc = "".join(parts)
    pad = size - len(doc) - len(end) - len("<!--  -->\n")
    filler = ("padding to a fixed size " * (pad // 24 + 1))[:pad]
    doc += "<!-- " + filler + " -->\n" + end
    data = doc.encode("ascii")
    assert len(data) == size, len(data)
    return data


# ------------------------------------------------------------------- main ---
def sha256(data):
    return hashlib.sha256(data).hexdigest()


def check():
    manifest = HERE / MANIFEST
    if not manifest.is_file():
        print(f"FAIL: {manifest} missing; run generate.py first", file=sys.stderr)
        return 1
    expected = {}
    for line in manifest.read_text().splitlines():
        digest, name = line.split(None, 1)
        expected[name.lstrip("*")] = digest
    bad = 0
    for name, size in SIZES.items():
        path = HERE / name
        if name not in expected:
            print(f"FAIL: {name} not listed in {MANIFEST}", file=sys.stderr)
            bad += 1
        elif not path.is_file():
            print(f"FAIL: {name} missing", file=sys.stderr)
            bad += 1
        else:
            data = path.read_bytes()
            if len(data) != size:
                print(f"FAIL: {name} is {len(data)} bytes, expected {size}", file=sys.stderr)
                bad += 1
            elif sha256(data) != expected[name]:
                print(f"FAIL: {name} sha256 {sha256(data)} != manifest {expected[name]}", file=sys.stderr)
                bad += 1
            else:
                print(f"OK   {name} {size} bytes")
    return 1 if bad else 0


def main(argv):
    if argv[1:] == ["--check"]:
        return check()
    if argv[1:]:
        print(__doc__, file=sys.stderr)
        return 2
    makers = {"index.html": make_html, "big.jpg": make_jpeg, "small.png": make_png}
    lines = []
    for name in ("index.html", "big.jpg", "small.png"):
        data = makers[name](SIZES[name])
        (HERE / name).write_bytes(data)
        lines.append(f"{sha256(data)}  {name}\n")
        print(f"wrote {name} ({len(data)} bytes)")
    (HERE / MANIFEST).write_text("".join(lines))
    print(f"wrote {MANIFEST}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
