"""PendingBudget: one server's cap on the bytes its connections hold for frames not yet complete (and frames held
by back-pressure). ``RemotingConnection`` charges it as its buffer grows and shrinks (``FrameDecoder.reserved``: a
frame larger than the standard buffer counts whole from the moment its length arrives, when its buffer is
allocated); over the cap, the connections holding the most are aborted, largest first, one log line each, until the
total fits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from protocol.remoting.connection import RemotingConnection


class PendingBudget:
    """A cap on the bytes all connections of one server hold for frames not yet complete (and frames held by
    back-pressure). Over the cap, the connections holding the most are aborted, largest first, one log line each,
    until the total fits: a peer that declares 16 MiB frames and trickles them cannot make the server hold
    ``connections × 16 MiB``."""

    __slots__ = ("cap", "evicted", "holders", "total")

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.total = 0
        self.evicted = 0
        self.holders: set[RemotingConnection] = set()

    def charge(self, conn: RemotingConnection, buffered: int) -> None:
        """``conn`` now holds ``buffered`` bytes."""
        self.total += buffered - conn.charged
        conn.charged = buffered
        if buffered:
            self.holders.add(conn)
        else:
            self.holders.discard(conn)
        if self.total > self.cap:
            self._evict()

    def _evict(self) -> None:
        for conn in sorted(self.holders, key=lambda c: c.charged, reverse=True):
            if self.total <= self.cap:
                return
            held = conn.charged
            self.evicted += 1
            conn.log.warning(
                "pending-frame budget exceeded, closing the connection holding the most",
                held=held,
                total=self.total,
                cap=self.cap,
            )
            self.total -= held
            conn.charged = 0
            self.holders.discard(conn)
            conn.drop_buffered()
            conn.abort(f"pending-frame budget of {self.cap} bytes exceeded (held {held})")
