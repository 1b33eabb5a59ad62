"""RequestContext: what a request handler gets besides the command (see ``protocol.remoting.handler``), built by
the connection for every request it routes to a handler (compiled: pyproject.toml ``[tool.rocketq.compile]``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.command import RemotingCommand

if TYPE_CHECKING:
    from protocol.remoting.handler import Channel


class RequestContext:
    """What a handler gets besides the command: the channel, the loop time its frame was read (``received_at``, so
    a handler can tell how long the request queued behind others: J's fast-failure check), and a logger bound
    lazily with code and opaque.

    Binding is lazy because most requests never log; the hot path must not pay for a bound logger per message.
    """

    __slots__ = ("_conn_log", "_log", "cmd", "conn", "long_polling", "received_at")

    def __init__(self, conn: Channel, cmd: RemotingCommand, conn_log: Any, received_at: float = 0.0) -> None:
        self.conn = conn
        self.cmd = cmd
        self.received_at = received_at
        # set by a handler that parked the request (a held pull): the RPC latency metric labels it is_long_polling
        self.long_polling = False
        self._conn_log = conn_log
        self._log: Any = None

    @property
    def log(self) -> Any:
        if self._log is None:
            self._log = self._conn_log.bind(code=self.cmd.code, opaque=self.cmd.opaque)
        return self._log
