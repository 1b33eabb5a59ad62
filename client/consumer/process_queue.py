"""ProcessQueue: the messages pulled for one queue and not yet consumed — pure state, no IO.

The offset to commit is the smallest queue offset still in flight (or, when nothing is, one past the largest ever
taken): a slow message holds the commit back, so a crash re-delivers it rather than losing it (at-least-once).
Counts and bytes feed flow control (pull threshold per queue).
"""

from __future__ import annotations

import time

from protocol.message import MessageExt


class ProcessQueue:
    __slots__ = ("_msgs", "bytes", "dropped", "last_pull", "locked", "lock_time", "max_offset_taken", "consuming")

    def __init__(self) -> None:
        self._msgs: dict[int, MessageExt] = {}
        self.bytes = 0
        self.dropped = False
        self.last_pull = time.monotonic()
        self.max_offset_taken = -1
        self.locked = False
        self.lock_time = 0.0
        self.consuming = False

    def __len__(self) -> int:
        return len(self._msgs)

    def put(self, msgs: list[MessageExt]) -> None:
        for m in msgs:
            if m.queue_offset not in self._msgs:
                self._msgs[m.queue_offset] = m
                self.bytes += len(m.body)
            if m.queue_offset > self.max_offset_taken:
                self.max_offset_taken = m.queue_offset

    def remove(self, msgs: list[MessageExt]) -> int:
        """Forget consumed messages; returns the offset safe to commit now (-1 if nothing was ever taken)."""
        for m in msgs:
            gone = self._msgs.pop(m.queue_offset, None)
            if gone is not None:
                self.bytes -= len(gone.body)
        return self.commit_offset()

    def commit_offset(self) -> int:
        if self._msgs:
            return min(self._msgs)
        return self.max_offset_taken + 1 if self.max_offset_taken >= 0 else -1

    def take_in_order(self, n: int) -> list[MessageExt]:
        """Orderly consumption: the ``n`` lowest offsets (they stay in flight until ``remove``)."""
        return [self._msgs[k] for k in sorted(self._msgs)[:n]]

    def clear(self) -> None:
        self._msgs.clear()
        self.bytes = 0
