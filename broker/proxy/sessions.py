"""The gRPC endpoint's client sessions: one ``GrpcClientChannel`` per client id (``x-mq-client-id``), made on its
first request and dropped when it closes, and the ACL check every request passes first (``GrpcAcl``: a refusal is
UNAUTHORIZED, or FORBIDDEN for an ACL 2.0 authorization refusal, as RocketMQ 5.3's proxy answers). Also the two
things every RPC adapter answers with: ``ClientError`` (a business error, carried in ``status`` with gRPC OK) and
``status``.
"""

from __future__ import annotations

from typing import Any

import structlog

from broker.proxy.acl import GrpcAcl
from broker.proxy.channel import GrpcClientChannel, language_of
from broker.proxy.pb import definition_pb2 as pb
from runtime.acl.rules import AclError

_log = structlog.get_logger("rocketq.broker.proxy")

Context = Any  # grpc.aio.ServicerContext (grpcio ships no type stubs)


class ClientError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def status(code: int, message: str = "") -> pb.Status:
    return pb.Status(code=code, message=message or pb.Code.Name(code))  # type: ignore[arg-type]


class ClientSessions:
    def __init__(self, acl: GrpcAcl | None) -> None:
        self.acl = acl  # None: no authentication (aclEnable=false)
        self._chans: dict[str, GrpcClientChannel] = {}

    def is_connected(self, client_id: str) -> bool:
        chan = self._chans.get(client_id)
        return chan is not None and not chan.is_closed

    def close_all(self) -> None:
        for chan in list(self._chans.values()):
            chan.close()

    @staticmethod
    def metadata(context: Context) -> dict[str, Any]:
        return {k: v for k, v in (context.invocation_metadata() or ())}

    @staticmethod
    def peer(context: Context) -> str:
        peer = str(context.peer() or "")
        for prefix in ("ipv4:", "ipv6:"):
            peer = peer.removeprefix(prefix)
        return peer

    def authorize(self, md: dict[str, Any], peer: str, request: Any | None) -> None:
        """The ACL check of one request (``acl``); raises ClientError."""
        if self.acl is not None:
            try:
                self.acl.check(md, peer, request)
            except AclError as exc:
                _log.info("gRPC request refused by ACL", peer=peer, request=type(request).__name__, reason=str(exc))
                raise ClientError(pb.Code.FORBIDDEN if exc.forbidden else pb.Code.UNAUTHORIZED, str(exc)) from None

    def session(self, context: Context, request: Any | None = None) -> GrpcClientChannel:
        """The calling client's channel, after the ACL check of ``request``; raises ClientError."""
        md = self.metadata(context)
        client_id = str(md.get("x-mq-client-id") or "")
        if not client_id:
            raise ClientError(pb.Code.CLIENT_ID_REQUIRED, "x-mq-client-id header is required")
        peer = self.peer(context)
        self.authorize(md, peer, request)
        chan = self._chans.get(client_id)
        if chan is None or chan.is_closed:
            chan = GrpcClientChannel(
                client_id,
                peer,
                language_of(str(md.get("x-mq-language") or "")),
                str(md.get("x-mq-client-version") or ""),
            )
            self._chans[client_id] = chan
            chan.add_close_callback(self._forget)
        return chan

    def _forget(self, chan: Any) -> None:
        if isinstance(chan, GrpcClientChannel) and self._chans.get(chan.client_id) is chan:
            del self._chans[chan.client_id]
