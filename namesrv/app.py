"""NamesrvApp: the name server's composition root. Builds the route table, KV config, housekeeping and handlers,
registers the handlers on a RemotingServer and owns start/stop order. No business logic lives here.

Several name servers run side by side with nothing shared: brokers register with each of them.

With ``enableControllerInNamesrv=true`` the name server also hosts a controller (``controller.app``): without
controller peers its request codes are answered on the name server's own port, with peers on the controller's own
peer address (as J). It starts before the name server listens and stops after it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import structlog

from controller.app import ControllerApp
from namesrv.config import LiveConfig, NamesrvConfig
from namesrv.handlers import BrokerHandlers, KvHandlers, RouteHandlers
from namesrv.housekeeping import BrokerHousekeeping
from namesrv.kv_config import KvConfig
from namesrv.metrics import NamesrvMetrics
from namesrv.route_table import RouteTable, monotonic_ms
from protocol.codes import RequestCode
from protocol.remoting import HandlerRegistry, RemotingServer
from protocol.remoting.tls import server_context
from runtime.acl.hook import NAMESRV_WRITE_CODES, AclWatcher
from runtime.daemon import DaemonApp
from runtime.live_config import ConfigHandlers

_log = structlog.get_logger("rocketq.namesrv")


class NamesrvApp(DaemonApp):
    """One name server. ``async with NamesrvApp(cfg) as ns:`` or ``await start()`` / ``await stop()``.

    ``start`` raises ``OSError`` when the port cannot be bound, ``KvConfigError`` when the KV file is unusable,
    ``AclError`` for a bad ACL file and ``TlsConfigError`` for unusable TLS files.
    """

    def __init__(self, config: NamesrvConfig, *, clock: Callable[[], int] = monotonic_ms) -> None:
        self._live_config = LiveConfig(config)
        self._routes = RouteTable(clock)
        self._housekeeping = BrokerHousekeeping(self._routes, self._live_config)
        self._kv: KvConfig | None = None
        self._server: RemotingServer | None = None
        self._port: int | None = None
        self.metrics: NamesrvMetrics | None = None
        self.acl: AclWatcher | None = None
        self.controller: ControllerApp | None = None

    @property
    def config(self) -> NamesrvConfig:
        """The effective config (including runtime updates)."""
        return self._live_config.current

    @property
    def route_table(self) -> RouteTable:
        return self._routes

    @property
    def kv_config(self) -> KvConfig:
        if self._kv is None:
            raise RuntimeError("name server not started")
        return self._kv

    @property
    def housekeeping(self) -> BrokerHousekeeping:
        return self._housekeeping

    @property
    def port(self) -> int:
        """The bound port (the real one when configured with listenPort=0); still known after ``stop``."""
        if self._port is None:
            raise RuntimeError("name server not started")
        return self._port

    @property
    def server(self) -> RemotingServer | None:
        """The listening server (its ``stats``, ``connection_count``, ``pending_bytes``); None when stopped."""
        return self._server

    @property
    def addr(self) -> str:
        """``host:port`` to dial this name server (loopback when bound to all interfaces)."""
        host = self.config.listen_address
        if host in ("0.0.0.0", "", "::"):
            host = "127.0.0.1"
        return f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"

    def _registry(self, kv: KvConfig) -> HandlerRegistry:
        registry = HandlerRegistry()
        registry.register_all(BrokerHandlers(self._routes, kv, self._housekeeping).table())
        registry.register_all(RouteHandlers(self._routes, kv, self._live_config).table())
        registry.register_all(KvHandlers(kv).table())
        registry.register_all(
            ConfigHandlers(
                self._live_config,
                get_code=RequestCode.GET_NAMESRV_CONFIG,
                update_code=RequestCode.UPDATE_NAMESRV_CONFIG,
                what="config",
            ).table()
        )
        return registry

    async def start(self) -> None:
        if self._server is not None:
            raise RuntimeError("name server already started")
        cfg = self.config
        kv = KvConfig.load(Path(cfg.kv_config_path).expanduser())
        if cfg.metrics_exporter_type == "PROM":
            self.metrics = NamesrvMetrics(
                cfg, self._routes, lambda: self.addr if self._port is not None else "", self._readiness
            )
        if cfg.acl_enable:  # AclError (a bad ACL file) propagates: the name server must not start without its rules
            self.acl = AclWatcher(
                cfg.rocketmq_home,
                interval_s=cfg.acl_reload_interval / 1000,
                admin_codes=NAMESRV_WRITE_CODES,
                only_codes=NAMESRV_WRITE_CODES,
            )
        registry = self._registry(kv)
        server = RemotingServer(
            registry,
            cfg.listen_address,
            cfg.listen_port,
            name="namesrv",
            idle_timeout_s=cfg.server_channel_max_idle_time_seconds,
            observer=self.metrics.observe if self.metrics is not None else None,
            request_hook=self.acl.hook if self.acl is not None else None,
            max_connections=cfg.server_max_connections,
            max_pending_bytes=cfg.server_max_pending_frame_bytes,
            tls_mode=cfg.tls_server_mode,
            ssl_context=(
                server_context(
                    cfg.tls_server_cert_path,
                    cfg.tls_server_key_path,
                    trust_cert_path=cfg.tls_server_trust_cert_path,
                    need_client_auth=cfg.tls_server_need_client_auth,
                )
                if cfg.tls_server_mode != "disabled"
                else None
            ),
        )
        if cfg.enable_controller_in_namesrv:
            self.controller = self._controller(registry)
            await self.controller.start()
        try:
            await server.start()
        except BaseException:
            if self.controller is not None:
                await self.controller.stop()
            raise
        if self.metrics is not None:
            if self.controller is not None:
                self.metrics.register(self.controller.collector(self.metrics.labels))
            try:
                await self.metrics.start()
            except OSError:
                await server.stop(0)
                raise
        if self.acl is not None:
            self.acl.start()
        self._kv, self._server, self._port = kv, server, server.port
        self._housekeeping.start()
        _log.info("name server started", port=server.port, kv_config_path=str(kv.path))

    def _controller(self, registry: HandlerRegistry) -> ControllerApp:
        """The embedded controller: namesrv.conf's controller keys, with the name server's interface and scan
        period (J sets ``scanNotActiveBrokerInterval`` on both from the one key)."""
        cfg = self.config
        ccfg = cfg.controller.model_copy(
            update={
                "listen_address": cfg.listen_address,
                "scan_not_active_broker_interval": cfg.scan_not_active_broker_interval,
                "metrics_exporter_type": "DISABLE",
            }
        )
        return ControllerApp(ccfg, registry=registry, shared_addr=lambda: self.addr)

    async def stop(self, grace: float = 5.0) -> None:
        """Stop the scan, stop accepting, let in-flight requests finish within ``grace`` s, close connections."""
        await self._housekeeping.stop()
        server, self._server = self._server, None
        if server is not None:
            await server.stop(grace)
        controller, self.controller = self.controller, None
        if controller is not None:
            await controller.stop()
        if self.metrics is not None:
            await self.metrics.stop()
        if self.acl is not None:
            await self.acl.stop()

    def _readiness(self) -> tuple[bool, str]:
        return (True, "") if self._server is not None else (False, "not listening")
