"""Scrubber: after start-up, verify the commit-log records recovery did not scan (everything before its scan
start), newest file first, a slice at a time on the event loop, so reads of older messages become cheap again.

Reads check every record below the store's *trusted-from* offset (``MessageStore`` read path); the scrubber moves
that offset down one whole file at a time, once every record of the file below it verified (the same check as
recovery: ``log_scan.check_at``). At the first damage it stops for good: the damaged region is copied to
quarantine and everything older stays checked on read (and skipped there when damaged), so the scrubber never
makes a damaged record trusted. Pages it reads are given back as it goes.
"""

from __future__ import annotations

import logging
from typing import Final

from broker.store.commitlog import CommitLog
from broker.store.log_scan import check_at, resync
from broker.store.quarantine import Quarantine
from broker.store.sealed_ranges import SealedRanges
from protocol.record import BLANK, RecordError

_log = logging.getLogger("rocketq.store.scrub")

SLICE_RECORDS: Final = 2000


class Scrubber:
    __slots__ = ("_commitlog", "_file_start", "_pos", "_quarantine", "_seals", "done", "trusted_from")

    def __init__(self, commitlog: CommitLog, quarantine: Quarantine, trusted_from: int, seals: SealedRanges) -> None:
        self._commitlog = commitlog
        self._quarantine = quarantine
        self._seals = seals
        self.trusted_from = trusted_from
        self.done = False
        self._file_start = -1  # the file being verified, and the position in it
        self._pos = 0

    def step(self, budget: int = SLICE_RECORDS) -> bool:
        """Verify up to ``budget`` records; returns False once there is nothing left to do."""
        if self.done:
            return False
        cl = self._commitlog
        if self._file_start < 0:
            if self.trusted_from <= cl.min_offset:
                return self._finish("scrub done: every commit-log record verified")
            mf = cl.queue.find(self.trusted_from - 1)
            if mf is None:
                return self._finish("scrub stopped: file gone")
            self._file_start, self._pos = mf.start, 0
        mf = cl.queue.find(self._file_start)
        if mf is None or mf.start != self._file_start:  # deleted by retention meanwhile
            return self._finish("scrub stopped: file deleted by retention")
        limit = min(mf.size, self.trusted_from - mf.start)
        pos = self._pos
        start = pos
        for _ in range(budget):
            if pos + 8 > limit:
                pos = limit
                break
            try:
                n = check_at(mf, pos, check_crc=True, seals=self._seals)
            except (RecordError, IndexError, ValueError) as exc:
                nxt = resync(mf, pos, check_crc=True, seals=self._seals)
                n_bad = (limit if nxt is None or nxt > limit else nxt) - pos
                self._quarantine.keep(mf.start + pos, mf.buf[pos : pos + n_bad], n_bad, f"scrub: {exc}")
                mf.release(start, pos + n_bad)
                return self._finish(f"scrub stopped at damage at {mf.start + pos}: older records stay checked on read")
            if n == BLANK:
                pos = limit
                break
            pos += n
        mf.release(start, pos)
        self._pos = pos
        if pos >= limit:
            self.trusted_from = mf.start
            self._file_start = -1
        return True

    def _finish(self, why: str) -> bool:
        self.done = True
        _log.info("%s (trusted from %d)", why, self.trusted_from)
        return False
