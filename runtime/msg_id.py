"""This process's unique message ids (J ``MessageClientIDSetter``, the ``UNIQ_KEY`` a producer sets): one
generator per process, made on first use, holding what the pure format (``protocol.msg_id``) needs — this host's
address, the pid, a per-process salt, the current month's bounds and a counter.
"""

from __future__ import annotations

import os
import socket
import threading
import time

from protocol.msg_id import format_uniq_id, month_bounds, uniq_id_prefix
from runtime.host import local_ip


class UniqIdGenerator:
    """Unique ids for one process: ``next_id`` reads the clock, ``next_ids`` and ``next_block`` read it once for a
    batch. The counter is taken under a lock, so a block of ``n`` consecutive values is reserved in one step."""

    __slots__ = ("_lock", "_month", "_next", "_prefix")

    def __init__(self, ip: str | None = None, pid: int | None = None) -> None:
        self._lock = threading.Lock()
        self._next = 0
        raw = socket.inet_aton(local_ip() if ip is None else ip)
        self._prefix = uniq_id_prefix(raw, os.getpid() if pid is None else pid, id(self._lock))
        self._month = (0, 0)  # (month start ms, next month start ms)

    def _take(self, n: int) -> int:
        with self._lock:
            first = self._next
            self._next = first + n
        return first

    def _ms_in_month(self) -> int:
        now = int(time.time() * 1000)
        if not self._month[0] <= now < self._month[1]:
            self._month = month_bounds(now)
        return now - self._month[0]

    def next_id(self) -> str:
        return format_uniq_id(self._prefix, self._ms_in_month(), self._take(1))

    def next_block(self, n: int) -> tuple[str, int]:
        """``n`` ids as ``(head, first)``: id ``i`` is ``head`` (28 hex chars) followed by ``(first + i) & 0xFFFF``
        as 4 uppercase hex chars, one clock reading for all; for callers that format the ids in bulk."""
        first = self._take(n)
        return format_uniq_id(self._prefix, self._ms_in_month(), 0)[:-4], first

    def next_ids(self, n: int) -> list[str]:
        """``n`` ids, one clock reading for all (a batch's messages): ids made within the same millisecond, each
        with its own counter value."""
        if n <= 0:
            return []
        head, first = self.next_block(n)
        return [f"{head}{(first + i) & 0xFFFF:04X}" for i in range(n)]


_generator: UniqIdGenerator | None = None


def _the_generator() -> UniqIdGenerator:
    global _generator
    if _generator is None:
        _generator = UniqIdGenerator()
    return _generator


def create_uniq_id() -> str:
    """A unique message id of this process (32 uppercase hex chars)."""
    return _the_generator().next_id()


def create_uniq_ids(n: int) -> list[str]:
    """``n`` unique ids of this process made with one clock reading (a batch)."""
    return _the_generator().next_ids(n)


def create_uniq_id_block(n: int) -> tuple[str, int]:
    """``n`` unique ids of this process as ``(head, first)`` (see :meth:`UniqIdGenerator.next_block`)."""
    return _the_generator().next_block(n)
