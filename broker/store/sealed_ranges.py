"""Which commit-log records must carry the whole-record CRC trailer: the ``crc_since`` file and the rule read from it.

A record without the trailer is either old (written before this store sealed records), or written by a broker that
did not seal (a downgrade, a replica copying an older master), or a sealed record whose trailer was damaged. Only
the last is damage, and the bytes alone cannot always tell: six zeroed bytes over the trailer's name leave a record
that looks written unsealed. So the store records *where it wrote sealed records itself*:

``crc_since`` file in the store root (rewritten whole: temporary file, fsync, rename)::

    | int64 | crc_since: the commit-log offset from which this store seals (written once, at the first open) |
    | 16 × n | n pairs (int64 start, int64 end): every record starting in [start, end) was appended by this store |
    |        | with sealing on, so it carries the trailer unless its properties leave no room for it              |

(The file of an earlier version is the first 8 bytes alone: no pairs.) Each open starts a range at the log's end
after recovery — extending the last one when it ends there, i.e. nothing was written by anyone else in between;
the range's end advances to the flushed commit-log offset at most every ``MARK_INTERVAL_S`` and at close, so after
a crash only the last seconds before it are not covered. A replicated append ends the current range for good (its
records are the master's, sealed or not).

The rule for the record at ``phys`` (``rule``):

    | LENIENT (0) | phys < crc_since              | an old record: RocketMQ 4.x checks (magic, sizes, body CRC)  |
    | GUARDED (1) | otherwise, outside every range | unsealed reads, unless its last 20 bytes are a damaged trailer |
    | STRICT (2)  | inside a range                 | no trailer (and room for one) is damage                       |
"""

from __future__ import annotations

import logging
import os
import struct
from typing import Final

_log = logging.getLogger("rocketq.store.sealed_ranges")

LENIENT: Final = 0
GUARDED: Final = 1
STRICT: Final = 2

MARK_INTERVAL_S: Final = 10.0
_I64: Final = struct.Struct(">q")
_PAIR: Final = struct.Struct(">qq")
FILE_NAME: Final = "crc_since"


class SealedRanges:
    """The rule's state. ``rule`` is read on the loop thread while ``mark`` runs on the logics-flush thread:
    ``ranges`` is only ever replaced by a new tuple, never changed in place."""

    __slots__ = ("_last_mark", "_own", "_root", "ranges", "since")

    def __init__(self, root: str, since: int, ranges: tuple[tuple[int, int], ...]) -> None:
        self._root = root
        self.since = since
        self.ranges = ranges
        self._own = False  # the last range is being extended by this store's own appends
        self._last_mark = 0.0

    @classmethod
    def load(cls, root: str) -> SealedRanges | None:
        """The file's state, or None when there is none (a store that has never sealed); an unreadable file
        counts as none (the ranges only ever make checks stricter)."""
        try:
            with open(os.path.join(root, FILE_NAME), "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return None
        if len(data) < _I64.size or (len(data) - _I64.size) % _PAIR.size:
            return None
        (since,) = _I64.unpack_from(data, 0)
        pairs = tuple(_PAIR.iter_unpack(data[_I64.size :]))
        return cls(root, since, tuple((int(s), int(e)) for s, e in pairs if s <= e))

    def rule(self, phys: int) -> int:
        if phys < self.since:
            return LENIENT
        for start, end in self.ranges:
            if start <= phys < end:
                return STRICT
        return GUARDED

    def open_range(self, at: int, min_offset: int) -> None:
        """This store starts appending sealed records at ``at`` (the log's end after recovery). Ranges wholly
        below ``min_offset`` (files deleted by retention) are dropped."""
        kept = [(s, e) for s, e in self.ranges if e > min_offset]
        if kept and kept[-1][1] == at:
            pass  # nobody wrote in between: the last range goes on
        else:
            kept.append((at, at))
        self.ranges = tuple(kept)
        self._own = True
        self._write()

    def foreign(self) -> None:
        """Bytes not appended by this store follow (a replica's copy): the current range ends where it is marked."""
        self._own = False

    def mark(self, flushed: int, now: float, *, force: bool = False) -> None:
        """Advance the current range to ``flushed`` (durable, appended by this store) and persist it — at most every
        ``MARK_INTERVAL_S`` unless ``force`` (close)."""
        if not self._own or not self.ranges or (not force and now - self._last_mark < MARK_INTERVAL_S):
            return
        start, end = self.ranges[-1]
        if flushed <= end:
            return
        self.ranges = (*self.ranges[:-1], (start, flushed))
        self._last_mark = now
        try:
            self._write()
        except OSError as exc:  # e.g. a full disk: the range in memory still holds; the file catches up later
            _log.warning("cannot record the sealed range in %s: %s", self._root, exc)

    def _write(self) -> None:
        path = os.path.join(self._root, FILE_NAME)
        tmp = path + ".tmp"
        data = _I64.pack(self.since) + b"".join(_PAIR.pack(s, e) for s, e in self.ranges)
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)


def first_open(root: str, at: int) -> SealedRanges:
    """A store sealing for the first time: records from ``at`` on are sealed (nothing is covered yet)."""
    return SealedRanges(root, at, ())
