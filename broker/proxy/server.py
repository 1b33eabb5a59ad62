"""ProxyServer: the RocketMQ 5 gRPC endpoint's lifecycle inside the broker process (``mqbroker --enable-proxy``,
RocketMQ 5's proxy in local mode): a ``grpc.aio`` server on the broker's event loop, on ``bindAddress:grpcServerPort``
(0 picks a free port; ``port`` tells which), serving ``service.MessagingService`` over the broker's services (checked
by ``acl.GrpcAcl`` against the broker's ACL rules when ACL is on; names put in the client's namespace by
``namespace.NamespaceInterceptor``), plus the
``PopService`` (loaded from and flushed to ``popState.json``) and its store arrival listener.

TLS with the remoting port's ``tls.*`` keys: ``tls.server.mode=enforcing`` serves the gRPC port with TLS only (a
plaintext client fails its handshake), with ``tls.server.certPath``/``keyPath`` and, for
``tls.server.need.client.auth=optional|require``, client certificates checked against ``tls.server.trustCertPath``.
``permissive`` keeps the gRPC port plaintext (grpcio cannot tell TLS from plaintext on one port as RocketMQ 5's
proxy does; one warning line says so); ``disabled``: plaintext. An encrypted key (``tls.server.keyPassword``) cannot
be handed to grpcio: the broker refuses to start with TLS on the gRPC port then.

Start after the broker's services; stop before them: stop accepting, cancel held receives (their messages stay in
flight and are redelivered), close the 5.x client channels, flush the POP state.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import grpc
import structlog

from broker.config import BrokerConfig
from broker.handlers.pull import physical_memory
from broker.proxy.acl import GrpcAcl
from broker.proxy.namespace import NamespaceInterceptor
from broker.proxy.pb import service_pb2_grpc as spb_grpc
from broker.proxy.pop_service import PopService
from broker.proxy.service import MessagingService
from broker.services.broker_stats import BrokerStats
from broker.wiring import Wiring
from runtime.acl.rules import AclRules

_log = structlog.get_logger("rocketq.broker.proxy")

# unlimited message sizes, as the clients configure their channels; body limits are checked per message
_OPTIONS = [
    ("grpc.max_receive_message_length", -1),
    ("grpc.max_send_message_length", -1),
    ("grpc.so_reuseport", 0),
]


class GrpcTlsError(ValueError):
    """The gRPC port cannot serve TLS with these settings (one line for the operator)."""


def server_credentials(config: BrokerConfig) -> grpc.ServerCredentials | None:
    """The gRPC port's TLS credentials, or None for plaintext (the module docstring's rules)."""
    sec = config.security
    if sec.tls_server_mode == "disabled":
        return None
    if sec.tls_server_mode == "permissive":
        _log.warning(
            "tls.server.mode=permissive: the gRPC port stays plaintext (set enforcing to serve TLS there)",
            port=config.proxy.grpc_server_port,
        )
        return None
    if sec.tls_server_key_password:
        raise GrpcTlsError(
            "tls.server.keyPassword: the gRPC port needs an unencrypted PEM key (grpcio takes no password)"
        )
    try:
        key = Path(sec.tls_server_key_path).read_bytes()
        chain = Path(sec.tls_server_cert_path).read_bytes()
        trust = Path(sec.tls_server_trust_cert_path).read_bytes() if sec.tls_server_trust_cert_path else None
    except OSError as exc:
        raise GrpcTlsError(f"cannot read the TLS files for the gRPC port: {exc}") from None
    auth = sec.tls_server_need_client_auth
    if auth != "none" and trust is None:
        raise GrpcTlsError(f"tls.server.need.client.auth={auth} needs tls.server.trustCertPath")
    return grpc.ssl_server_credentials(
        [(key, chain)], root_certificates=trust if auth != "none" else None, require_client_auth=auth == "require"
    )


class ProxyServer:
    def __init__(
        self,
        config: BrokerConfig,
        wiring: Wiring,
        acl_rules: Callable[[], AclRules] | None = None,
        stats: BrokerStats | None = None,
    ) -> None:
        """``wiring``: the remoting front end's tables and services (send, consume, transactions), which this one shares;
        ``acl_rules``: the broker's current ACL rules when ``aclEnable`` is on (every RPC is then checked)."""
        self._config = config
        tables = wiring.group_tables
        store, topics, groups, offsets, _ = tables

        def max_attempts(group: str) -> int:
            g = groups.get(group)
            return (g.retry_max_times if g is not None else 16) + 1

        self.pop = PopService(
            store,
            topics,
            offsets,
            config.store.config_dir,
            max_attempts=max_attempts,
            default_invisible_ms=config.proxy.default_invisible_time_mills,
            stats=stats,
            init_by_check_in_mem=config.proxy.init_pop_offset_by_check_msg_in_mem,
            in_memory_bytes=physical_memory() * config.ha.access_message_in_memory_max_ratio // 100,
        )
        self.pop.load()
        self.service = MessagingService(
            config,
            tables,
            wiring.sends,
            wiring.consume,
            wiring.transactions,
            self.pop,
            lambda: (config.identity.broker_ip1, self.port),
            GrpcAcl(acl_rules) if acl_rules is not None else None,
        )
        self.pop.alive = self.service.is_connected
        store.add_arrival_listener(self.pop.on_arrival)
        self._server: grpc.aio.Server | None = None
        self._port: int | None = None

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("gRPC endpoint not started")
        return self._port

    async def start(self) -> None:
        cfg = self._config
        server = grpc.aio.server(options=_OPTIONS, interceptors=[NamespaceInterceptor()])
        spb_grpc.add_MessagingServiceServicer_to_server(self.service, server)  # type: ignore[no-untyped-call]  # protoc output
        addr = f"{cfg.network.bind_address}:{cfg.proxy.grpc_server_port}"
        try:
            creds = server_credentials(cfg)
        except GrpcTlsError as exc:
            raise OSError(str(exc)) from None
        try:
            port = server.add_insecure_port(addr) if creds is None else server.add_secure_port(addr, creds)
        except RuntimeError as exc:
            raise OSError(f"cannot bind the gRPC endpoint to {addr}: {exc}") from None
        if port == 0:
            raise OSError(f"cannot bind the gRPC endpoint to {addr}")
        await server.start()
        self._server, self._port = server, port
        self.pop.start()
        _log.info("gRPC endpoint started", addr=f"{cfg.identity.broker_ip1}:{port}", tls=creds is not None)

    async def stop(self, grace: float = 1.0) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self.service.close_all()
        await server.stop(grace)
        await self.pop.stop()
