"""The unfiltered get's fast path: consume-queue units read as runs of records that lie back to back in the log.

Messages of one queue appended one after another without other queues' records between them (a producer's batch,
a Spark sink partition, a single-queue producer) have units whose records are contiguous: record ``j + 1`` starts
where record ``j`` ends. An unfiltered PULL of such units is then a few slices of the commit log (one per run), the
same bytes the general loop (``broker.store.reads``) joins record by record. :func:`record_runs` tells, from the units
alone and without a Python step per unit (one ``struct`` unpack, ``itertools.accumulate``, ``bisect`` and
``compress`` over the columns), how many units the general loop would take (``max_msgs``, ``max_bytes``: the same
cut) and the runs of back-to-back records they make; the caller still decides whether those records need their read
check (then it takes the general loop).

Units (``consume_queue.py``: 20 bytes each, big-endian):

| bytes | field     | here                                          |
|-------|-----------|-----------------------------------------------|
| 0-7   | phys      | commit-log offset of the record               |
| 8-11  | size      | the record's size                             |
| 12-19 | tags code | unused (the fast path is for unfiltered gets) |
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
import struct
from typing import NamedTuple


class Runs(NamedTuple):
    """``records`` records, ``size`` bytes in all, as ``(phys, size)`` runs of back-to-back records, in unit order."""

    runs: list[tuple[int, int]]
    size: int
    records: int
    lowest: int  # the lowest commit-log offset of them (runs need not ascend)


@functools.lru_cache(maxsize=32)
def _units_struct(n: int) -> struct.Struct:
    """``n`` units as (phys, size) pairs, the tags codes skipped."""
    return struct.Struct(">" + "qi8x" * n)


def record_runs(units: memoryview | bytes, count: int, max_msgs: int, max_bytes: int) -> Runs | None:
    """The records the general get loop would take from the first ``count`` units, as runs of back-to-back records,
    when all their sizes are positive; ``None`` otherwise (the caller runs the general loop).

    The loop takes unit ``j`` while ``j < max_msgs`` and the sizes of units ``0..j`` add up to at most ``max_bytes``,
    and always takes the first unit."""
    n = min(count, max_msgs)
    if n <= 0:
        return None
    flat = _units_struct(n).unpack_from(units, 0)
    phys, sizes = flat[0::2], flat[1::2]
    if min(sizes) <= 0:
        return None
    before = list(itertools.accumulate(sizes, initial=0))  # before[j]: bytes of units 0..j-1
    take = max(1, bisect.bisect_right(before, max_bytes, 1) - 1)
    phys, sizes = phys[:take], sizes[:take]
    ends = list(map(operator.add, phys, sizes))
    breaks = list(itertools.compress(range(1, take), map(operator.ne, phys[1:], ends)))
    cuts = [0, *breaks, take]
    runs = [(phys[a], before[b] - before[a]) for a, b in itertools.pairwise(cuts)]
    return Runs(runs, before[take], take, min(phys))
