"""ControllerApp: one controller's composition root — config, state machine, event log (single: a JSON state file;
several: the PySyncObj Raft log), heartbeat table, service, handlers — and where it listens.

Where a controller answers (its *remoting address*, what brokers put in ``controllerAddr``):

* with peers (``controllerDLegerPeers`` / ``jRaft*``): its own peer address, as J's DLedger/JRaft controller;
* without peers, standalone (``mqcontroller``): ``listenAddress:listenPort`` (0 = a free port);
* without peers, embedded in a name server (``enableControllerInNamesrv=true``): the name server's own port — the
  name server passes its handler registry (``registry``) and address (``shared_addr``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import structlog

from controller.config import ControllerConfig, LiveControllerConfig, raft_peers
from controller.handlers import ControllerHandlers
from controller.heartbeat import HeartbeatTable
from controller.local_log import EventLog, LocalEventLog
from controller.metrics import ControllerCollector
from controller.service import ControllerService
from controller.state import ControllerState
from protocol.headers.controller import GetMetaDataResponseHeader
from protocol.remoting import HandlerRegistry, RemotingClient, RemotingServer
from runtime.daemon import DaemonApp
from runtime.exporter import DaemonMetrics

_log = structlog.get_logger("rocketq.controller")


def monotonic_ms() -> int:
    """The heartbeat clock: monotonic, so a wall-clock step never expires (or revives) every broker at once."""
    return time.monotonic_ns() // 1_000_000


def _dial(host: str, port: int) -> str:
    if host in ("0.0.0.0", "", "::"):
        host = "127.0.0.1"
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class ControllerApp(DaemonApp):
    """``async with ControllerApp(cfg) as c:`` — ``c.addr`` is its remoting address once started."""

    def __init__(
        self,
        config: ControllerConfig,
        *,
        registry: HandlerRegistry | None = None,
        shared_addr: Callable[[], str] | None = None,
        clock_ms: Callable[[], int] = monotonic_ms,
    ) -> None:
        self.config = LiveControllerConfig(config)
        self.peers = raft_peers(config)
        self._shared_registry = registry if self.peers is None else None
        self._shared_addr = shared_addr
        self.state = ControllerState(elect_unclean=config.enable_elect_unclean_master)
        self.heartbeats = HeartbeatTable(clock_ms)
        self.log: EventLog = self._make_log(config)
        self.notifier = RemotingClient()
        self.service = ControllerService(self.config, self.log, self.heartbeats, self.notifier)
        self.handlers = ControllerHandlers(self.service, self.config, self.metadata)
        self.metrics: DaemonMetrics | None = None
        self._server: RemotingServer | None = None
        self._started = False

    def _make_log(self, cfg: ControllerConfig) -> EventLog:
        if self.peers is not None and self.peers.others:
            from controller.raft_log import RaftEventLog  # pysyncobj is only needed with peers

            return RaftEventLog(
                cfg.store_path,
                self.state,
                self.peers,
                election_timeout_ms=cfg.jraft_election_timeout_ms,
                snapshot_s=cfg.jraft_snapshot_interval_secs,
            )
        self_id = self.peers.self_peer.peer_id if self.peers is not None else (cfg.controller_dleger_self_id or "n0")
        return LocalEventLog(cfg.store_path, self.state, self_id)

    @property
    def addr(self) -> str:
        if self.peers is not None:
            return self.peers.self_peer.rpc_addr
        if self._shared_addr is not None and self._shared_registry is not None:
            return self._shared_addr()
        if self._server is None:
            raise RuntimeError("controller not started")
        return _dial(self.config.current.listen_address, self._server.port)

    @property
    def port(self) -> int:
        return int(self.addr.rpartition(":")[2])

    def metadata(self) -> GetMetaDataResponseHeader:
        """CONTROLLER_GET_METADATA_INFO: J's DLedger form (``peers`` = ``id:host:port;`` each)."""
        cfg = self.config.current
        if self.peers is None or not self.peers.others:
            me = self.peers.self_peer.peer_id if self.peers else (cfg.controller_dleger_self_id or "n0")
            group = self.peers.group if self.peers else cfg.controller_dleger_group
            peers = f"{me}:{self.addr};"
            leader: tuple[str, str] | None = (me, self.addr)
        else:
            group = self.peers.group
            peers = "".join(f"{p.peer_id}:{p.rpc_addr};" for p in self.peers.all)
            leader = self.log.leader()
        return GetMetaDataResponseHeader(
            group=group,
            controller_leader_id=leader[0] if leader else None,
            controller_leader_address=leader[1] if leader else None,
            is_leader=self.log.is_leader,
            peers=peers,
        )

    def collector(self, labels: Callable[[], dict[str, str]]) -> ControllerCollector:
        return ControllerCollector(self.service, labels)

    def labels(self) -> dict[str, str]:
        return {"node_type": "controller", "node_id": self.addr if self._started else "", **self.config.current.labels}

    async def start(self) -> None:
        cfg = self.config.current
        await self.log.start()
        try:
            if self._shared_registry is not None:
                self._shared_registry.register_all(self.handlers.table())
            else:
                registry = HandlerRegistry()
                registry.register_all(self.handlers.table())
                if self.peers is not None:
                    _host, _, port = self.peers.self_peer.rpc_addr.rpartition(":")
                    bind_host, bind_port = cfg.listen_address, int(port)
                else:
                    bind_host, bind_port = cfg.listen_address, cfg.listen_port
                if cfg.metrics_exporter_type == "PROM":
                    self.metrics = DaemonMetrics(
                        self.labels,
                        cfg.metrics_prom_exporter_host or bind_host,
                        cfg.metrics_prom_exporter_port,
                        lambda: (True, ""),
                        name="controller",
                    )
                    self.metrics.register(self.collector(self.labels))
                server = RemotingServer(
                    registry,
                    bind_host,
                    bind_port,
                    name="controller",
                    observer=self.metrics.observe if self.metrics else None,
                )
                await server.start()
                self._server = server
                if self.metrics is not None:
                    await self.metrics.start()
        except BaseException:
            await self.log.stop()
            raise
        self._started = True
        self.service.start()
        mode = "raft" if self.peers is not None and self.peers.others else "single"
        where = "the name server's port" if self._shared_registry is not None else self.addr
        _log.info("controller started", addr=where, mode=mode, store=str(cfg.store_path))

    async def stop(self, grace: float = 2.0) -> None:
        await self.service.stop()
        server, self._server = self._server, None
        if server is not None:
            await server.stop(grace)
        if self.metrics is not None:
            await self.metrics.stop()
        await self.notifier.close()
        await self.log.stop()
        self._started = False
