"""The scanner's way into compressed files (io/compressed.decompressed_into, the zstd frame walk) against the
reference reader (io/compressed.decompressed): the same content, and an error for exactly the same files."""

from __future__ import annotations

import gzip
import io
import itertools
import random
import struct
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from gainscope.errors import FormatError
from gainscope.io import compressed
from gainscope.io.compressed import Buffers, compression_of, decompressed, decompressed_into, zstd_frames
from gainscope.io.text import TextFile

zstandard = pytest.importorskip("zstandard")

BODY = b"".join(b"q%d Q0 d%d %d %d.25 run\n" % (q, d, d + 1, 500 - d) for q in range(60) for d in range(400))


def skippable(payload: bytes, nibble: int = 0) -> bytes:
    """A skippable zstd frame (RFC 8878 3.1.2), as pzstd writes before each frame (its payload: the frame's size)."""
    return struct.pack("<II", 0x184D2A50 | nibble, len(payload)) + payload


def frames(data: bytes, cuts: int, **options: object) -> bytes:
    """``data`` as ``cuts`` zstd frames, each after a skippable frame giving its size, as pzstd writes them."""
    size = -(-len(data) // cuts)
    out = b""
    for i in range(0, len(data), size):
        frame = zstandard.ZstdCompressor(**options).compress(data[i:i + size])
        out += skippable(struct.pack("<I", len(frame))) + frame
    return out


def streamed(data: bytes) -> bytes:
    """One zstd frame whose header does not give the content's size (written by a streaming compressor)."""
    compressor = zstandard.ZstdCompressor(write_checksum=True).compressobj()
    return compressor.compress(data) + compressor.flush()


NOISE = random.Random(5).randbytes(300_000)  # incompressible: raw blocks
SOUND = {
    "gzip": gzip.compress(BODY, mtime=0),
    "gzip members and padding": (gzip.compress(BODY[:70_000]) + b"\0\0" + gzip.compress(BODY[70_000:])
                                 + gzip.compress(b"")),
    "zstd": zstandard.ZstdCompressor().compress(BODY),
    "zstd checksum, no size": zstandard.ZstdCompressor(write_checksum=True, write_content_size=False).compress(BODY),
    "zstd streamed": streamed(BODY),
    "zstd frames (pzstd)": frames(BODY, 7, write_checksum=True),
    "zstd frames, one streamed": zstandard.ZstdCompressor().compress(BODY[:9000]) + streamed(BODY[9000:]),
    "zstd skippable first and last": (skippable(b"hello", 15) + zstandard.ZstdCompressor().compress(BODY)
                                      + skippable(b"")),
    "zstd empty frames": (zstandard.ZstdCompressor().compress(b"") + zstandard.ZstdCompressor().compress(BODY)
                          + zstandard.ZstdCompressor(write_checksum=True).compress(b"")),
    "zstd rle and raw blocks": zstandard.ZstdCompressor().compress(b"a" * 400_000 + NOISE + BODY),
    "zstd level 19, long window": zstandard.ZstdCompressor(level=19).compress(BODY * 3),
}
CONTENT = {"zstd rle and raw blocks": b"a" * 400_000 + NOISE + BODY, "zstd level 19, long window": BODY * 3}


def content_into_buffers(raw: io.BytesIO | io.BufferedReader, kind: str | None, size: int, headroom: int,
                         pool: ThreadPoolExecutor | None) -> bytes:
    buffers = Buffers(4)
    out = []
    for buffer, n in decompressed_into(raw, kind, buffers, size, headroom, pool, ahead=2):
        assert 0 < n <= max(size, len(buffer) - headroom)
        out.append(bytes(buffer[headroom:headroom + n]))
        buffers.give(buffer)
    assert buffers._free.qsize() == 4  # every buffer given back
    return b"".join(out)


def with_zlib(names: list[str]) -> list[tuple[str, bool]]:
    """Each name with zlib_only False, and gzip's also with True (ISA-L hidden: zlib inflates)."""
    return [(n, z) for n in names for z in ((False, True) if n.startswith("gzip") else (False,))]


@pytest.mark.parametrize(("size", "headroom"), [(1, 0), (5000, 3), (1 << 22, 1 << 10)])
@pytest.mark.parametrize(("name", "zlib_only"), with_zlib(list(SOUND)))
def test_into_buffers_gives_the_reference_content(monkeypatch: pytest.MonkeyPatch, name: str, size: int,
                                                  headroom: int, zlib_only: bool) -> None:
    if zlib_only:
        monkeypatch.setattr(compressed, "_isal", lambda: None)
    blob = SOUND[name]
    kind = compression_of(blob[:4])
    assert kind == name.split()[0]
    expected = CONTENT.get(name, BODY)
    assert b"".join(decompressed(io.BytesIO(blob), kind, 1 << 16)) == expected
    with ThreadPoolExecutor(2) as pool:
        assert content_into_buffers(io.BytesIO(blob), kind, max(size, 64), headroom, pool) == expected
    assert content_into_buffers(io.BytesIO(blob), kind, max(size, 64), headroom, None) == expected


@pytest.mark.parametrize("name", [n for n in SOUND if n.startswith("zstd")])
def test_zstd_frames_are_those_zstandard_reads(name: str) -> None:
    """The walk over headers finds the frames that decompressing one after another finds: each data frame read
    alone ends exactly at the end the walk gives it, and the frames cover the file."""
    blob = SOUND[name]
    walked = zstd_frames(io.BytesIO(blob))
    assert walked[0].offset == 0 and sum(f.length for f in walked) == len(blob)
    for a, b in itertools.pairwise(walked):
        assert a.offset + a.length == b.offset
    for frame in walked:
        data = blob[frame.offset:frame.offset + frame.length]
        reader = zstandard.ZstdDecompressor().decompressobj()
        out = reader.decompress(data)
        assert reader.eof and reader.unused_data == b"", frame
        if frame.skippable:
            assert out == b"" and frame.content_size == 0
        elif frame.content_size is not None:
            assert len(out) == frame.content_size


def test_pzstd_frames_are_decompressed_in_parallel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Several frames that give their content size: each group of frames is decompressed by a job on the pool."""
    jobs: list[int] = []
    real = compressed._decompress_frames

    def job(data: bytes, out: memoryview) -> int:
        jobs.append(len(out))
        return real(data, out)

    monkeypatch.setattr(compressed, "_decompress_frames", job)
    with ThreadPoolExecutor(2) as pool:
        assert content_into_buffers(io.BytesIO(SOUND["zstd frames (pzstd)"]), "zstd", 30_000, 16, pool) == BODY
    assert len(jobs) == 7 and sum(jobs) == len(BODY)  # one frame of about 1/7 of the content each


# ---------------------------------------------------------------------- damaged files: an error on both paths
def _damaged() -> dict[str, bytes]:
    good = SOUND["gzip"]
    corrupt = bytearray(good)
    corrupt[30:40] = b"\xff" * 10
    one = zstandard.ZstdCompressor(write_checksum=True).compress(BODY)
    pz = SOUND["zstd frames (pzstd)"]
    walked = zstd_frames(io.BytesIO(pz))
    third = walked[5]  # the third data frame
    bad_frame = bytearray(pz)
    bad_frame[third.offset + 40:third.offset + 60] = bytes(b ^ 0x55 for b in pz[third.offset + 40:third.offset + 60])
    empty = zstandard.ZstdCompressor(write_checksum=True).compress(b"")
    return {
        "gzip truncated": good[: len(good) // 2],
        "gzip trailer cut": good[:-3],
        "gzip bad CRC": good[:-8] + bytes([good[-8] ^ 1]) + good[-7:],
        "gzip bad length": good[:-4] + b"\0\0\0\0",
        "gzip corrupt deflate": bytes(corrupt),
        "gzip garbage after": good + b"garbage",
        "gzip half a member after": good + good[:40],
        "zstd truncated": one[: len(one) // 2],
        "zstd checksum cut": one[:-2],
        "zstd header cut": one[:5],
        "zstd bad checksum": one[:-1] + bytes([one[-1] ^ 1]),
        "zstd corrupt block": one[:20] + bytes(b ^ 0x55 for b in one[20:40]) + one[40:],
        "zstd garbage after": one + b"garbage",
        "zstd two bytes after": one + b"\0\0",
        "zstd skippable frame cut": one + skippable(b"x" * 50)[:30],
        "zstd frames, truncated": pz[: len(pz) - 1000],
        "zstd frames, one corrupt": bytes(bad_frame),
        "zstd frames, empty one with a bad checksum": pz + empty[:-1] + bytes([empty[-1] ^ 1]),
    }


@pytest.mark.parametrize(("name", "zlib_only"), with_zlib(list(_damaged())))
def test_damaged_files_are_refused_on_both_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
                                                 zlib_only: bool) -> None:
    if zlib_only:
        monkeypatch.setattr(compressed, "_isal", lambda: None)
    path = tmp_path / "run.txt.gz"
    path.write_bytes(_damaged()[name])
    src = TextFile(path)
    with pytest.raises(FormatError, match=f"^{path}: the (gzip|zstd) data "):
        src.read_bytes()  # the readers' way
    buffers = Buffers(3)
    with ThreadPoolExecutor(2) as pool, pytest.raises(FormatError, match=f"^{path}: the (gzip|zstd) data "):
        for buffer, _ in src.into_buffers(buffers, 20_000, 16, pool):
            buffers.give(buffer)


def test_pzstd_output_is_zstd() -> None:
    """pzstd starts its files with a skippable frame, not zstd's magic number: still zstd (was: read as text and
    refused as bytes that are not UTF-8)."""
    assert compression_of(SOUND["zstd frames (pzstd)"][:4]) == "zstd"
    assert compression_of(skippable(b"")[:4]) == "zstd"
    assert compression_of(b"P*M\x17") is None and compression_of(b"q1 Q0") is None


def test_no_buffer_is_written_after_an_early_stop() -> None:
    """A reader that stops early (the scanner refused a piece): the jobs still out end before the generator
    closes, and their buffers come back."""
    buffers = Buffers(6)
    with ThreadPoolExecutor(2) as pool:
        chunks = decompressed_into(io.BytesIO(SOUND["zstd frames (pzstd)"]), "zstd", buffers, 30_000, 0, pool,
                                   ahead=3)
        buffer, _ = next(chunks)
        chunks.close()
        buffers.give(buffer)
    assert buffers._free.qsize() == 6


def test_a_real_file_is_read_from_disk(tmp_path: Path) -> None:
    path = tmp_path / "run.zst"
    path.write_bytes(SOUND["zstd frames (pzstd)"])
    buffers = Buffers(4)
    out = []
    with ThreadPoolExecutor(2) as pool:
        for buffer, n in TextFile(path).into_buffers(buffers, 1 << 16, 8, pool):
            out.append(bytes(buffer[8:8 + n]))
            buffers.give(buffer)
    assert b"".join(out) == BODY
