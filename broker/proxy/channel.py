"""A 5.x gRPC client as the broker's services see a client connection: ``GrpcClientChannel`` implements the remoting
``Channel`` protocol, so the client registry (``mqadmin consumerConnection`` / ``producerConnection``, expiry) and the
transaction check-back work for 5.x clients unchanged.

One channel per ``x-mq-client-id``. It owns the client's last Settings (from its Telemetry stream) and the queue of
server → client Telemetry commands. Broker → client requests map as:

============================== ===========================================================================
remoting request (oneway)      what the 5.x client gets
============================== ===========================================================================
CHECK_TRANSACTION_STATE        Telemetry ``recover_orphaned_transaction_command{message, transaction_id}``
NOTIFY_CONSUMER_IDS_CHANGED    nothing (5.x consumers do not rebalance; the broker pops for them)
anything else                  nothing (logged)
============================== ===========================================================================

``transaction_id`` is ``<half queue offset>_<half commit-log offset>`` (what EndTransaction hands back).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable

import structlog

from broker.proxy.convert import to_v2
from broker.proxy.pb import definition_pb2 as pb
from broker.proxy.pb import service_pb2 as spb
from protocol.codes import LanguageCode, RequestCode
from protocol.command import RemotingCommand
from protocol.errors import ConnectionClosedError
from protocol.record_decode import decode_record
from protocol.remoting.handler import Channel, ChannelState

_log = structlog.get_logger("rocketq.broker.proxy")
_ids = itertools.count(1 << 40)


def transaction_id(queue_offset: int, commit_log_offset: int) -> str:
    return f"{queue_offset}_{commit_log_offset}"


def parse_transaction_id(tid: str) -> tuple[int, int] | None:
    a, sep, b = tid.partition("_")
    if not sep or not a.isdigit() or not b.isdigit():
        return None
    return int(a), int(b)


def language_of(name: str) -> LanguageCode:
    try:
        return LanguageCode[name.upper()]
    except KeyError:
        return LanguageCode.OTHER


class GrpcClientChannel(ChannelState):
    protocol_type = "grpc"  # J 5.x's protocol_type label of the connection gauges (remoting channels: "remoting")

    def __init__(self, client_id: str, peer: str, language: LanguageCode, version: str) -> None:
        self.client_id = client_id
        self._peer = peer
        self._language = language
        self.version = version
        self._conn_id = next(_ids)
        self._closed = False
        self._close_callbacks: list[Callable[[Channel], None]] = []
        self.settings: pb.Settings | None = None
        self._streams: list[asyncio.Queue[spb.TelemetryCommand | None]] = []

    def add_stream(self, outbox: asyncio.Queue[spb.TelemetryCommand | None]) -> None:
        """A Telemetry stream of this client opened; server → client commands go to the newest one."""
        self._streams.append(outbox)

    def remove_stream(self, outbox: asyncio.Queue[spb.TelemetryCommand | None]) -> None:
        if outbox in self._streams:
            self._streams.remove(outbox)

    # -- Channel protocol ----------------------------------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        return 0

    async def invoke(self, cmd: RemotingCommand, timeout: float) -> RemotingCommand:
        raise ConnectionClosedError(f"a gRPC client ({self.client_id}) answers no remoting request {cmd.code}")

    def invoke_oneway(self, cmd: RemotingCommand) -> None:
        if self._closed:
            raise ConnectionClosedError(f"gRPC client {self.client_id} is gone")
        if cmd.code == RequestCode.CHECK_TRANSACTION_STATE:
            if not self._streams:
                raise ConnectionClosedError(f"gRPC client {self.client_id} has no telemetry stream")
            msg = decode_record(cmd.body)[0]
            ext = cmd.ext_fields
            tid = transaction_id(int(ext["tranStateTableOffset"]), int(ext["commitLogOffset"]))
            command = spb.TelemetryCommand()
            command.status.code = pb.Code.OK
            command.recover_orphaned_transaction_command.message.CopyFrom(to_v2(msg))
            command.recover_orphaned_transaction_command.transaction_id = tid
            self._streams[-1].put_nowait(command)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for outbox in self._streams:
            outbox.put_nowait(None)  # ends the telemetry streams
        self._run_close_callbacks(_log.bind(client_id=self.client_id))

    def __hash__(self) -> int:
        return self._conn_id

    def __eq__(self, other: object) -> bool:
        return self is other
