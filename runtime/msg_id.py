"""This process's unique message ids (J ``MessageClientIDSetter``, the ``UNIQ_KEY`` a producer sets): one
generator per process, made on first use, holding what the pure format (``protocol.msg_id``) needs — this host's
address, the pid, a per-process salt, the current month's bounds and a counter.
"""

from __future__ import annotations

import itertools
import os
import socket
import time

from protocol.msg_id import format_uniq_id, month_bounds, uniq_id_prefix
from runtime.host import local_ip


class UniqIdGenerator:
    """Unique ids for one process: ``next_id`` reads the clock, ``next_ids`` reads it once for a batch."""

    __slots__ = ("_counter", "_month", "_prefix")

    def __init__(self, ip: str | None = None, pid: int | None = None) -> None:
        self._counter = itertools.count()
        raw = socket.inet_aton(local_ip() if ip is None else ip)
        self._prefix = uniq_id_prefix(raw, os.getpid() if pid is None else pid, id(self._counter))
        self._month = (0, 0)  # (month start ms, next month start ms)

    def next_id(self) -> str:
        now = int(time.time() * 1000)
        if not self._month[0] <= now < self._month[1]:
            self._month = month_bounds(now)
        return format_uniq_id(self._prefix, now - self._month[0], next(self._counter))

    def next_ids(self, n: int) -> list[str]:
        """``n`` ids, one clock reading for all (a batch's messages): ids made within the same millisecond, each
        with its own counter value."""
        first = self.next_id()
        if n <= 1:
            return [first] if n == 1 else []
        head = first[:-4]
        count = self._counter
        return [first, *[f"{head}{next(count) & 0xFFFF:04X}" for _ in range(n - 1)]]


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
