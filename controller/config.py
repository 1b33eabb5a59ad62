"""Controller configuration: the frozen ``ControllerConfig``, its table of J 5.5.0 key names (``ControllerConfig``,
``JraftConfig``, ``NettyServerConfig.listenPort``), and how the peers are read into Raft (pysyncobj) members.

============================== ========================= ==========================================================
key                            default                   meaning
============================== ========================= ==========================================================
listenPort                     19876                     remoting port of a controller without peers (J
                                                         ``mqcontroller``'s); 0 = a free one. With peers the
                                                         controller listens on its own peer address, as J
listenAddress / bindAddress    0.0.0.0                   interface to bind
controllerType                 DLedger                   DLedger: the ``controllerDLeger*`` keys name the peers;
                                                         jRaft: the ``jRaft*`` keys do
controllerDLegerGroup          ""                        Raft group name (reported by getControllerMetaData)
controllerDLegerPeers          ""                        ``n0-host:port;n1-host:port;…``: each controller's
                                                         remoting address (brokers' ``controllerAddr``). Empty or
                                                         one peer: single-controller mode, no Raft
controllerDLegerSelfId         ""                        this controller's id in the peers
controllerRaftPortOffset       1000                      ours: DLedger peers replicate (pysyncobj) on their
                                                         remoting port + this offset
jRaftGroupId                   jRaft-Controller          Raft group name (jRaft)
jRaftInitConf                  ""                        ``host:port,…``: the Raft addresses (jRaft)
jRaftServerId                  ""                        this controller's Raft address (jRaft)
jRaftControllerRPCAddr         ""                        ``host:port,…``: the remoting addresses, in
                                                         ``jRaftInitConf``'s order (jRaft)
jRaftElectionTimeoutMs         1000                      Raft election timeout (pysyncobj: this ±40 %)
jRaftSnapshotIntervalSecs      3600                      snapshot (log compaction) at least this often
controllerStorePath            ~/DLedgerController       where the Raft journal and snapshot (or, single mode,
                                                         ``controller-state.json``) live; a restart reads them
scanNotActiveBrokerInterval    5000 (ms)                 period of the broker heartbeat expiry scan
scanInactiveMasterInterval     5000 (ms)                 period of the leader's "master gone, elect" scan
electMasterMaxRetryCount       3                         tries of a controller-triggered election
enableElectUncleanMaster       false                     elect outside the SyncStateSet when none of it is live
                                                         (may lose acknowledged messages)
notifyBrokerRoleChanged        true                      push NOTIFY_BROKER_ROLE_CHANGED to the live replicas
                                                         after an election
configBlackList                configBlackList;configStorePath   keys UPDATE_CONTROLLER_CONFIG refuses
metricsExporterType            DISABLE                   PROM serves /metrics (README "Controller")
metricsPromExporterHost/Port   "" / 5557                 where
metricsLabel                   ""                        constant labels
rocketmqHome, configStorePath                            accepted as J's
logDir / logLevel / logFormat / logFileMaxSize / logFileMaxIndex   as the name server's
============================== ========================= ==========================================================

Runtime updates (UPDATE_CONTROLLER_CONFIG) change ``RUNTIME_KEYS`` only; others answer NO_PERMISSION, as J does
for its black list.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from runtime import live_config
from runtime.config_loader import OBSERVABILITY_KEYS, DaemonBasics, KeyTable, home_path
from runtime.config_loader import ConfigError as ConfigError
from runtime.config_loader import ConfigUpdateRefused as ConfigUpdateRefused
from runtime.config_loader import Key as _Key
from runtime.java_config_keys import NETTY_CLIENT_CONFIG, NETTY_SERVER_CONFIG


class ControllerConfig(DaemonBasics):
    listen_port: int = Field(19876, ge=0, le=65535)
    listen_address: str = "0.0.0.0"
    config_store_path: str = Field(default_factory=lambda: home_path("controller", "controller.properties"))
    controller_type: Literal["DLedger", "jRaft"] = "DLedger"
    controller_dleger_group: str = ""
    controller_dleger_peers: str = ""
    controller_dleger_self_id: str = ""
    controller_raft_port_offset: int = Field(1000, ge=1, le=65535)
    jraft_group_id: str = "jRaft-Controller"
    jraft_init_conf: str = ""
    jraft_server_id: str = ""
    jraft_controller_rpc_addr: str = ""
    jraft_election_timeout_ms: int = Field(1000, ge=100)
    jraft_snapshot_interval_secs: int = Field(3600, ge=1)
    controller_store_path: str = ""
    scan_not_active_broker_interval: int = Field(5000, gt=0)
    scan_inactive_master_interval: int = Field(5000, gt=0)
    elect_master_max_retry_count: int = Field(3, ge=1)
    enable_elect_unclean_master: bool = False
    notify_broker_role_changed: bool = True
    config_black_list: str = "configBlackList;configStorePath"

    @model_validator(mode="after")
    def _peers_valid(self) -> ControllerConfig:
        raft_peers(self)  # raises ValueError naming the problem
        return self

    @property
    def store_path(self) -> Path:
        """J ``getControllerStorePath``: ``~/<controllerType>Controller`` when empty."""
        return Path(self.controller_store_path or home_path(f"{self.controller_type}Controller")).expanduser()


@dataclass(frozen=True, slots=True)
class Peer:
    """One controller: its id (J's peer id), remoting address (what brokers dial) and Raft address."""

    peer_id: str
    rpc_addr: str
    raft_addr: str


@dataclass(frozen=True, slots=True)
class Peers:
    group: str
    self_peer: Peer
    others: tuple[Peer, ...]

    @property
    def all(self) -> tuple[Peer, ...]:
        return tuple(sorted((self.self_peer, *self.others), key=lambda p: p.peer_id))

    def by_raft(self, raft_addr: str) -> Peer | None:
        return next((p for p in self.all if p.raft_addr == raft_addr), None)


def _host_port(text: str, what: str) -> tuple[str, int]:
    host, sep, port = text.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{what}: {text!r} is not host:port")
    return host, int(port)


def raft_peers(cfg: ControllerConfig) -> Peers | None:
    """The Raft members, or None for single-controller mode (no peers, or only this one)."""
    if cfg.controller_type == "jRaft":
        if not cfg.jraft_init_conf.strip():
            return None
        rafts = [a.strip() for a in cfg.jraft_init_conf.split(",") if a.strip()]
        rpcs = [a.strip() for a in cfg.jraft_controller_rpc_addr.split(",") if a.strip()]
        if len(rafts) != len(rpcs):
            raise ValueError("jRaftInitConf and jRaftControllerRPCAddr must list as many addresses")
        for a in (*rafts, *rpcs):
            _host_port(a, "jRaft address")
        if cfg.jraft_server_id.strip() not in rafts:
            raise ValueError(f"jRaftServerId {cfg.jraft_server_id!r} is not one of jRaftInitConf")
        peers = [Peer(raft, rpc, raft) for raft, rpc in zip(rafts, rpcs, strict=True)]
        me = cfg.jraft_server_id.strip()
        group = cfg.jraft_group_id
    else:
        entries = [e.strip() for e in cfg.controller_dleger_peers.split(";") if e.strip()]
        if not entries:
            return None
        peers = []
        for entry in entries:
            peer_id, sep, addr = entry.partition("-")
            if not sep or not peer_id:
                raise ValueError(f"controllerDLegerPeers: {entry!r} is not id-host:port")
            host, port = _host_port(addr, "controllerDLegerPeers")
            raft_port = port + cfg.controller_raft_port_offset
            if raft_port > 65535:
                raise ValueError(f"controllerDLegerPeers: {entry!r} + controllerRaftPortOffset is past port 65535")
            peers.append(Peer(peer_id, f"{host}:{port}", f"{host}:{raft_port}"))
        me = cfg.controller_dleger_self_id.strip()
        if me not in {p.peer_id for p in peers}:
            raise ValueError(f"controllerDLegerSelfId {me!r} is not one of controllerDLegerPeers")
        group = cfg.controller_dleger_group
    self_peer = next(p for p in peers if p.peer_id == me)
    if len(peers) == 1:
        return Peers(group, self_peer, ())
    return Peers(group, self_peer, tuple(p for p in peers if p is not self_peer))


KEYS: dict[str, _Key] = {
    "listenPort": _Key("listen_port", int),
    "listenAddress": _Key("listen_address", str),
    "rocketmqHome": _Key("rocketmq_home", str),
    "configStorePath": _Key("config_store_path", str),
    "controllerType": _Key("controller_type", str),
    "controllerDLegerGroup": _Key("controller_dleger_group", str),
    "controllerDLegerPeers": _Key("controller_dleger_peers", str),
    "controllerDLegerSelfId": _Key("controller_dleger_self_id", str),
    "controllerRaftPortOffset": _Key("controller_raft_port_offset", int),
    "jRaftGroupId": _Key("jraft_group_id", str),
    "jRaftInitConf": _Key("jraft_init_conf", str),
    "jRaftServerId": _Key("jraft_server_id", str),
    "jRaftControllerRPCAddr": _Key("jraft_controller_rpc_addr", str),
    "jRaftElectionTimeoutMs": _Key("jraft_election_timeout_ms", int),
    "jRaftSnapshotIntervalSecs": _Key("jraft_snapshot_interval_secs", int),
    "controllerStorePath": _Key("controller_store_path", str),
    "scanNotActiveBrokerInterval": _Key("scan_not_active_broker_interval", int),
    "scanInactiveMasterInterval": _Key("scan_inactive_master_interval", int),
    "electMasterMaxRetryCount": _Key("elect_master_max_retry_count", int),
    "enableElectUncleanMaster": _Key("enable_elect_unclean_master", bool),
    "notifyBrokerRoleChanged": _Key("notify_broker_role_changed", bool),
    "configBlackList": _Key("config_black_list", str),
    **OBSERVABILITY_KEYS,
}
ALIASES: dict[str, str] = {"bindAddress": "listenAddress"}
# J ControllerConfig / JraftConfig keys with no effect here (threads, DLedger file sizes, OTel exporters)
_J_ONLY: dict[str, type] = {
    "controllerThreadPoolNums": int,
    "controllerRequestThreadPoolQueueCapacity": int,
    "mappedFileSize": int,
    "isProcessReadEvent": bool,
    "processReadEvent": bool,
    "metricsGrpcExporterTarget": str,
    "metricsGrpcExporterHeader": str,
    "metricGrpcExporterTimeOutInMills": int,
    "metricGrpcExporterIntervalInMills": int,
    "metricLoggingExporterIntervalInMills": int,
    "metricsInDelta": bool,
    "jRaftScanWaitTimeoutMs": int,
}
FILE_KEYS: dict[str, type] = {**NETTY_SERVER_CONFIG, **NETTY_CLIENT_CONFIG, **_J_ONLY}
# UPDATE_CONTROLLER_CONFIG may change these (nothing that names a file, a port or a peer)
RUNTIME_KEYS: frozenset[str] = frozenset(
    {
        "enableElectUncleanMaster",
        "notifyBrokerRoleChanged",
        "scanNotActiveBrokerInterval",
        "scanInactiveMasterInterval",
        "electMasterMaxRetryCount",
    }
)

TABLE = KeyTable(ControllerConfig, KEYS, FILE_KEYS, aliases=ALIASES)
load_config = TABLE.load
config_from_properties = TABLE.from_properties


def format_config(cfg: ControllerConfig) -> str:
    """``key=value`` lines in table order (``-p`` and the GET_CONTROLLER_CONFIG body)."""
    lines = []
    for name, spec in KEYS.items():
        value = getattr(cfg, spec.field)
        lines.append(f"{name}={str(value).lower() if isinstance(value, bool) else value}")
    return "\n".join(lines) + "\n"


def updated(cfg: ControllerConfig, props: Mapping[str, str]) -> ControllerConfig:
    """``cfg`` with ``props`` applied, all or none: ConfigUpdateRefused for a key that may not change at runtime
    (J's black list answer), ConfigError for a bad value."""
    black = {k.strip() for k in cfg.config_black_list.split(";") if k.strip()} | {"configBlackList", "rocketmqHome"}
    for key in props:
        name = ALIASES.get(key, key)
        if name in black:
            raise ConfigUpdateRefused("Can not update config in black list.")
        if name not in RUNTIME_KEYS:
            raise ConfigUpdateRefused(
                f"config key {key} can not be changed at runtime (allowed: {', '.join(sorted(RUNTIME_KEYS))})"
            )
    fields: dict[str, Any] = {}
    TABLE.collect(props.items(), fields)
    return TABLE.build(fields, base=cfg)


class LiveControllerConfig(live_config.LiveConfig[ControllerConfig]):
    """The controller's current config, replaced by UPDATE_CONTROLLER_CONFIG (``updated``); readers call it each
    time."""

    def __init__(self, cfg: ControllerConfig) -> None:
        super().__init__(cfg, updated, format_config)
