"""``protocol.crc.crc32`` is zlib's CRC-32 bit for bit: files and frames checked before it read the same."""

from __future__ import annotations

import random
import zlib

import pytest

from protocol.crc import crc32


@pytest.mark.parametrize("n", [0, 1, 7, 64, 200, 1024, 4097, 65536])
def test_crc32_is_zlibs(n: int) -> None:
    rng = random.Random(n)
    data = rng.randbytes(n)
    start = rng.getrandbits(32)
    assert crc32(data) == zlib.crc32(data)
    assert crc32(data, start) == zlib.crc32(data, start)
    view = memoryview(bytearray(data))[n // 3 :]
    assert crc32(view, start) == zlib.crc32(view, start)
    # chaining over pieces is the CRC of the whole, as the store's seal relies on
    assert crc32(data[n // 2 :], crc32(data[: n // 2])) == zlib.crc32(data)
