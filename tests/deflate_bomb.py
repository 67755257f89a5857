"""Writing decompression bombs fast, for the tests that must refuse them.

A bomb of 2 GiB of zeros is about 2 MB of deflate; zlib takes seconds to compress
that much, but after a full flush (which resets the dictionary) every equal block
compresses to the same bytes, so the stream is one block's output repeated: the bomb
is written in the time of its CRC, and it is a true one (it inflates as announced).
"""

import zlib


class RepeatedDeflate:
    """A raw-deflate compressor for a header then blocks equal to ``block``."""

    def __init__(self, head: bytes, block: bytes):
        self.co = zlib.compressobj(9, zlib.DEFLATED, -15)
        self.head, self.block = head, block
        fresh = zlib.compressobj(9, zlib.DEFLATED, -15)
        self.piece = fresh.compress(block) + fresh.flush(zlib.Z_FULL_FLUSH)

    def compress(self, data):
        if data is self.head:
            return self.co.compress(data) + self.co.flush(zlib.Z_FULL_FLUSH)
        assert data is self.block
        return self.piece

    def flush(self):
        return self.co.flush()


def write_repeated(fh, head: bytes, block: bytes, count: int) -> None:
    """Write ``head`` then ``count`` times ``block`` to ``fh``, a member of a
    ``zipfile.ZipFile`` opened for writing with ``ZIP_DEFLATED``."""
    fh._compressor = RepeatedDeflate(head, block)  # zipfile's own compressor is too slow
    fh.write(head)
    for _ in range(count):
        fh.write(block)


def gzip_repeated(path, block: bytes, count: int) -> None:
    """A gzip file of ``count`` times ``block`` (the same trick, gzip framing)."""
    import struct

    crc, piece = 0, RepeatedDeflate(b"", block).piece
    for _ in range(count):
        crc = zlib.crc32(block, crc)
    with open(path, "wb") as fh:
        fh.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff")
        for _ in range(count):
            fh.write(piece)
        fh.write(zlib.compressobj(9, zlib.DEFLATED, -15).flush())
        fh.write(struct.pack("<II", crc, (len(block) * count) & 0xFFFFFFFF))
