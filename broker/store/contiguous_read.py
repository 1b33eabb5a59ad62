"""The unfiltered get's fast path: consume-queue units whose records lie back to back in the commit log.

Messages of one queue that were appended one after another without other queues' records between them (a producer
of one queue, a batch, a Spark sink partition) have units whose records are contiguous: record ``j + 1`` starts where
record ``j`` ends. An unfiltered PULL of such units is then one slice of the commit log, the same bytes the general
loop (``broker.store.reads``) joins record by record. :func:`contiguous_span` tells, from the units alone and without a
Python step per unit (one ``struct`` unpack, ``itertools.accumulate``, one list compare), how many units the general
loop would take (``max_msgs``, ``max_bytes``: the same cut) and whether their records are one span; the caller still
decides whether those records need their read check (then it takes the general loop).

Units (``consume_queue.py``: 20 bytes each, big-endian):

| bytes | field     | here                                         |
|-------|-----------|----------------------------------------------|
| 0-7   | phys      | commit-log offset of the record               |
| 8-11  | size      | the record's size                            |
| 12-19 | tags code | unused (the fast path is for unfiltered gets) |
"""

from __future__ import annotations

import bisect
import functools
import itertools
import struct
from typing import NamedTuple


class Span(NamedTuple):
    """``count`` records from commit-log offset ``phys``, ``size`` bytes in all."""

    phys: int
    size: int
    count: int


@functools.lru_cache(maxsize=32)
def _units_struct(n: int) -> struct.Struct:
    """``n`` units as (phys, size) pairs, the tags codes skipped."""
    return struct.Struct(">" + "qi8x" * n)


def contiguous_span(units: memoryview | bytes, count: int, max_msgs: int, max_bytes: int) -> Span | None:
    """The records the general get loop would take from the first ``count`` units, when they are one span of the
    commit log with positive sizes; ``None`` otherwise (the caller runs the general loop).

    The loop takes unit ``j`` while ``j < max_msgs`` and the sizes of units ``0..j`` add up to at most ``max_bytes``,
    and always takes the first unit."""
    n = min(count, max_msgs)
    if n <= 0:
        return None
    flat = _units_struct(n).unpack_from(units, 0) if n > 1 else struct.unpack_from(">qi", units, 0)
    phys, sizes = flat[0::2], flat[1::2]
    if min(sizes) <= 0:
        return None
    starts = list(itertools.accumulate(sizes, initial=phys[0]))  # where each record would start if back to back
    take = max(1, bisect.bisect_right(starts, phys[0] + max_bytes, 1) - 1)  # starts[j + 1] = end of record j
    if list(phys[:take]) != starts[:take]:
        return None
    return Span(phys[0], starts[take] - phys[0], take)

