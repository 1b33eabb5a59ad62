"""Name server configuration: the frozen ``NamesrvConfig``, the one table of RocketMQ key names, the Java-properties
parser for ``namesrv.conf``, and the allow-list for runtime updates (UPDATE_NAMESRV_CONFIG).

Keys (RocketMQ names; ``brokerChannelExpiredTime`` is ours, see below):

============================ ========================= =======================================================
key                          default                   meaning
============================ ========================= =======================================================
listenPort                   9876                      TCP port (0 = pick a free one; tests use it)
listenAddress / bindAddress  0.0.0.0                   interface to bind (``bindAddress`` is J 5.x's name)
kvConfigPath                 ~/namesrv/kvConfig.json   KV config file. Never changeable at runtime
configStorePath              ~/namesrv/namesrv.properties  J persists runtime updates here; we never write it
scanNotActiveBrokerInterval  10000 (ms)                period of the dead-broker scan (J 4.9.x: fixed 10 s;
                                                       the key is J 5.x's, whose default is 5000)
brokerChannelExpiredTime     120000 (ms)               a broker silent this long is dropped. J has only the
                                                       constant ``BROKER_CHANNEL_EXPIRED_TIME``; this key is our
                                                       extension so tests and operators can shorten it
orderMessageEnable           false                     put ``orderTopicConf`` (KV ORDER_TOPIC_CONFIG) in routes
serverChannelMaxIdleTimeSeconds  120                   close a connection idle this long (0 = never); J
                                                       NettyServerConfig
clusterTest                  false                     accepted for compatibility; no effect
productEnvName               center                    accepted for compatibility; no effect
rocketmqHome                 $ROCKETMQ_HOME or ""      with aclEnable: the ACL files are under <rocketmqHome>/conf
metricsExporterType          DISABLE                   PROM serves /metrics /healthz /readyz (README "Observability")
metricsPromExporterHost      "" (→ listenAddress)      interface of the metrics endpoint
metricsPromExporterPort      5558                      its port; the broker's default is 5557, so both fit one host
metricsLabel                 ""                        k1:v1,k2:v2 constant labels on every series
logDir / logLevel / logFormat / logFileMaxSize / logFileMaxIndex   log files, as the broker's (README)
aclEnable                    false                     beyond J: with accounts, the write codes (REGISTER_BROKER,
                                                       KV writes, write perms, …) need a signed admin account
aclReloadInterval            5000 (ms)                 ACL file check period (0 = no hot reload); ours
serverMaxConnections         10000                     accepted connections beyond this are closed; ours
serverMaxPendingFrameBytes   268435456                 cap on bytes buffered for incomplete frames, all
                                                       connections together; ours
tls.server.mode              disabled                  disabled / permissive / enforcing (J's key)
tls.server.certPath, tls.server.keyPath, tls.server.trustCertPath, tls.server.need.client.auth: J's TLS keys
enableControllerInNamesrv    false                     run a controller (RocketMQ 5.x controller mode) in this
                                                       name server; every controller key of ``controller.config``
                                                       (``controllerDLegerPeers``, ``enableElectUncleanMaster``,
                                                       …) is read from this file too. Without peers it answers
                                                       on this name server's own port
============================ ========================= =======================================================

Unknown keys are an error naming the key, with a "did you mean" (J silently ignores them, a known usability trap);
the other keys RocketMQ 4.9's name server reads (``NO_EFFECT_KEYS``) are accepted with one warning line. Runtime updates accept
only ``RUNTIME_KEYS``; a path (CVE-2023-37582) or anything else is refused with a remark naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, model_validator

from controller.config import KEYS as CONTROLLER_KEYS
from controller.config import ControllerConfig
from runtime import live_config
from runtime.config_loader import OBSERVABILITY_KEYS, DaemonBasics, KeyTable, home_path
from runtime.config_loader import ConfigError as ConfigError
from runtime.config_loader import ConfigUpdateRefused as ConfigUpdateRefused
from runtime.config_loader import Key as _Key
from runtime.config_loader import parse_properties as parse_properties
from runtime.java_config_keys import NAMESRV_FILE_KEYS


class NamesrvConfig(DaemonBasics):
    listen_port: int = Field(9876, ge=0, le=65535)
    listen_address: str = "0.0.0.0"
    kv_config_path: str = Field(default_factory=lambda: home_path("namesrv", "kvConfig.json"))
    config_store_path: str = Field(default_factory=lambda: home_path("namesrv", "namesrv.properties"))
    scan_not_active_broker_interval: int = Field(10_000, gt=0)
    broker_channel_expired_time: int = Field(120_000, gt=0)
    server_channel_max_idle_time_seconds: int = Field(120, ge=0)
    order_message_enable: bool = False
    cluster_test: bool = False
    product_env_name: str = "center"
    metrics_prom_exporter_port: int = Field(5558, ge=0, le=65535)
    acl_enable: bool = False
    acl_reload_interval: int = Field(5000, ge=0)
    server_max_connections: int = Field(10_000, ge=1)
    server_max_pending_frame_bytes: int = Field(256 * 1024 * 1024, ge=16 * 1024 * 1024)
    tls_server_mode: Literal["disabled", "permissive", "enforcing"] = "disabled"
    tls_server_need_client_auth: Literal["none", "optional", "require"] = "none"
    tls_server_cert_path: str = ""
    tls_server_key_path: str = ""
    tls_server_trust_cert_path: str = ""
    enable_controller_in_namesrv: bool = False
    controller: ControllerConfig = Field(default_factory=lambda: ControllerConfig.model_validate({}))

    @model_validator(mode="after")
    def _acl_home(self) -> NamesrvConfig:
        if self.acl_enable and not self.rocketmq_home:
            raise ValueError("aclEnable=true needs rocketmqHome (the ACL files are <rocketmqHome>/conf/plain_acl.yml)")
        return self


# The ONE mapping from RocketMQ property names onto NamesrvConfig fields. Order = the order ``-p`` prints.
KEYS: dict[str, _Key] = {
    "listenPort": _Key("listen_port", int),
    "listenAddress": _Key("listen_address", str),
    "kvConfigPath": _Key("kv_config_path", str),
    "configStorePath": _Key("config_store_path", str),
    "scanNotActiveBrokerInterval": _Key("scan_not_active_broker_interval", int),
    "brokerChannelExpiredTime": _Key("broker_channel_expired_time", int),
    "serverChannelMaxIdleTimeSeconds": _Key("server_channel_max_idle_time_seconds", int),
    "orderMessageEnable": _Key("order_message_enable", bool),
    "clusterTest": _Key("cluster_test", bool),
    "productEnvName": _Key("product_env_name", str),
    "rocketmqHome": _Key("rocketmq_home", str),
    **OBSERVABILITY_KEYS,
    "aclEnable": _Key("acl_enable", bool),
    "aclReloadInterval": _Key("acl_reload_interval", int),
    "serverMaxConnections": _Key("server_max_connections", int),
    "serverMaxPendingFrameBytes": _Key("server_max_pending_frame_bytes", int),
    "tls.server.mode": _Key("tls_server_mode", str),
    "tls.server.need.client.auth": _Key("tls_server_need_client_auth", str),
    "tls.server.certPath": _Key("tls_server_cert_path", str),
    "tls.server.keyPath": _Key("tls_server_key_path", str),
    "tls.server.trustCertPath": _Key("tls_server_trust_cert_path", str),
    "enableControllerInNamesrv": _Key("enable_controller_in_namesrv", bool),
}
# The embedded controller's keys (J reads them from namesrv.conf): every controller key the name server has no key of
# its own for; the shared ones (listen address, metrics, logs) are the name server's.
KEYS.update(
    {
        name: _Key(spec.field, spec.kind, section="controller")
        for name, spec in CONTROLLER_KEYS.items()
        if name not in KEYS and name != "configBlackList"  # J namesrv's own key (no effect here)
    }
)
ALIASES: dict[str, str] = {"bindAddress": "listenAddress"}

# What UPDATE_NAMESRV_CONFIG may change. Never a path, never anything that reaches a file name or a process.
RUNTIME_KEYS: frozenset[str] = frozenset(
    {"orderMessageEnable", "scanNotActiveBrokerInterval", "brokerChannelExpiredTime"}
)


def _bad_value(key: str, kind: type, value: str) -> str | None:
    """The name server's wording of a bad value (its own start-up and CLI tests pin it)."""
    text = value.strip()
    if kind is int:
        try:
            int(text)
        except ValueError:
            return f"{key}={value} is not a valid integer"
    if kind is bool and text.lower() not in ("true", "false"):
        return f"{key}={value} is not a valid boolean (true/false)"
    return None


_TABLE = KeyTable(NamesrvConfig, KEYS, NAMESRV_FILE_KEYS, aliases=ALIASES, bad_value=_bad_value)
# Keys RocketMQ 4.9's name server reads (NamesrvConfig, NettyServerConfig; runtime.java_config_keys) that do
# nothing here: accepted with one warning line naming them.
NO_EFFECT_KEYS: frozenset[str] = _TABLE.no_effect
PATH_KEYS: frozenset[str] = frozenset(
    {
        "kvConfigPath",
        "configStorePath",
        "rocketmqHome",
        "logDir",
        "tls.server.certPath",
        "tls.server.keyPath",
        "tls.server.trustCertPath",
    }
)


# canonical_key(key): the RocketMQ key for a key, alias or field name; config_from_properties(text, source,
# overrides, warn=): the config of a properties text; load_config(path, overrides, warn=): of namesrv.conf (or the
# defaults when path is None). Unknown keys raise ConfigError; keys without effect are reported through ``warn``.
canonical_key = _TABLE.canonical
config_from_properties = _TABLE.from_properties
load_config = _TABLE.load


def format_config(cfg: NamesrvConfig) -> str:
    """``key=value`` lines in table order (``-p`` output and the GET_NAMESRV_CONFIG body)."""
    lines = []
    for name, spec in KEYS.items():
        value = getattr(getattr(cfg, spec.section) if spec.section else cfg, spec.field)
        lines.append(f"{name}={str(value).lower() if isinstance(value, bool) else value}")
    return "\n".join(lines) + "\n"


def updated(cfg: NamesrvConfig, props: Mapping[str, str]) -> NamesrvConfig:
    """``cfg`` with ``props`` applied, all or none: ConfigUpdateRefused for a path (CVE-2023-37582), an unknown key
    or one outside ``RUNTIME_KEYS``, ConfigError for a bad value."""
    for key in props:
        name = ALIASES.get(key, key)
        if name in PATH_KEYS:
            raise ConfigUpdateRefused(f"Can not update config path: {key}")
        if name not in KEYS:
            raise ConfigUpdateRefused(f"unknown config key: {key}")
        if name not in RUNTIME_KEYS:
            allowed = ", ".join(sorted(RUNTIME_KEYS))
            raise ConfigUpdateRefused(f"config key {key} can not be changed at runtime (allowed: {allowed})")
    fields: dict[str, Any] = {}
    _TABLE.collect(props.items(), fields)
    return _TABLE.build(fields, base=cfg)


class LiveConfig(live_config.LiveConfig[NamesrvConfig]):
    """The name server's current config, replaceable at runtime through ``RUNTIME_KEYS`` (``updated``)."""

    def __init__(self, cfg: NamesrvConfig) -> None:
        super().__init__(cfg, updated, format_config)
