"""Broker configuration: frozen pydantic sections, the ONE table mapping RocketMQ ``broker.conf`` keys onto them, the
Java-properties loader, and the ``-p``/``-m`` printers.

Every key is RocketMQ's name (4.9.x ``BrokerConfig``, ``NettyServerConfig``, ``MessageStoreConfig``); defaults are
RocketMQ's except where a dev box needs something else (``brokerName`` "broker-a" instead of the hostname,
``brokerIP1`` 127.0.0.1 instead of the first non-loopback address). Unknown keys and bad values are an error that
names the key, with a "did you mean" (J silently ignores unknown keys, a known usability trap). Every other key
RocketMQ 4.9 reads from broker.conf (``runtime.java_config_keys``) is accepted with one warning line naming the
ones without effect here (``NO_EFFECT_KEYS``), so an operator's existing file starts unchanged.

Accepted but without effect yet: ``brokerIP2``, ``flushCommitLogLeastPages``, ``flushCommitLogThoroughInterval``.
Replication (``brokerRole``, ``haListenPort`` and the ``ha`` section) is ``broker.ha``'s: ``haListenPort`` defaults to
listenPort + 1 as J's BrokerStartup sets it (0 with listenPort 0), and an explicit value wins.
``serverChannelMaxIdleTimeSeconds`` (0 = never) closes connections idle that long.

Sections: ``identity`` (who this broker is), ``network`` (listener and client channels), ``namesrv`` (registration),
``store`` (the message store; turned into ``broker.store.config.StoreConfig`` by ``broker.app``), ``features``
(auto-create, polling, persistence periods), ``proxy`` (the RocketMQ 5 gRPC endpoint, ``broker.proxy``), ``security``
(ACL reload period, ``innerAccessKey``/``innerSecretKey`` towards name servers, ``serverMaxConnections``,
``serverMaxPendingFrameBytes``, J's ``tls.*`` keys; ``tls.test.mode.enable`` is accepted without effect: no
self-signed certificate is generated).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from runtime.config_loader import ConfigError as ConfigError
from runtime.config_loader import Key, KeyTable, metric_labels, warn_stderr
from runtime.config_loader import parse_properties as parse_properties
from runtime.java_config_keys import BROKER_FILE_KEYS
from runtime.logsetup import check_log_levels

DEFAULT_DELAY_LEVELS = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"
_UNIT_MS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_ADDR = re.compile(r"^[A-Za-z0-9_.\-]+:\d{1,5}$")


def parse_delay_levels(text: str) -> tuple[int, ...]:
    """``"1s 5s 1m 2h"`` → delays in ms per level (level 1 first). Units s/m/h/d, as J's ``parseDelayLevel``."""
    out: list[int] = []
    for item in text.split():
        unit = item[-1:]
        if unit not in _UNIT_MS or not item[:-1].isdigit() or int(item[:-1]) <= 0:
            raise ValueError(f"bad delay level {item!r} (expected e.g. 1s, 5m, 2h, 1d)")
        out.append(int(item[:-1]) * _UNIT_MS[unit])
    if not out:
        raise ValueError("at least one delay level is required")
    return tuple(out)


def _home(*parts: str) -> str:
    return str(Path.home().joinpath(*parts))


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class IdentityConfig(_Section):
    broker_cluster_name: str = Field("DefaultCluster", min_length=1)
    broker_name: str = Field("broker-a", min_length=1)
    broker_id: int = Field(0, ge=0)
    broker_ip1: str = Field("127.0.0.1", min_length=1)
    broker_ip2: str = ""
    broker_role: Literal["ASYNC_MASTER", "SYNC_MASTER", "SLAVE"] = "ASYNC_MASTER"
    broker_permission: int = Field(6, ge=0, le=15)
    region_id: str = "DefaultRegion"
    trace_on: bool = True
    rocketmq_home: str = Field(default_factory=lambda: os.environ.get("ROCKETMQ_HOME", ""))

    @model_validator(mode="after")
    def _role_vs_id(self) -> IdentityConfig:
        if self.broker_role != "SLAVE" and self.broker_id != 0:
            raise ValueError(
                f"brokerId={self.broker_id}: a master (brokerRole={self.broker_role}) must have brokerId 0"
            )
        if self.broker_role == "SLAVE" and self.broker_id == 0:
            raise ValueError("brokerId=0: a SLAVE (brokerRole=SLAVE) must have brokerId > 0")
        return self


class NetworkConfig(_Section):
    listen_port: int = Field(10911, ge=0, le=65535)
    bind_address: str = "0.0.0.0"
    server_channel_max_idle_time_seconds: int = Field(120, ge=0)
    channel_expired_timeout: int = Field(120_000, gt=0)
    ha_listen_port: int = Field(10912, ge=0, le=65535)
    fast_listen_port: int = Field(10909, ge=-1, le=65535)  # J's fast (VIP) server; -1 = not opened


class NamesrvSection(_Section):
    namesrv_addr: str = ""
    register_name_server_period: int = Field(30_000, ge=100, le=60_000)
    register_broker_timeout_mills: int = Field(6_000, gt=0)

    @field_validator("namesrv_addr")
    @classmethod
    def _addrs(cls, v: str) -> str:
        for addr in filter(None, (a.strip() for a in v.split(";"))):
            if not _ADDR.match(addr):
                raise ValueError(f"bad name server address {addr!r}, expected host:port[;host:port]")
        return v

    @property
    def addrs(self) -> list[str]:
        return [a.strip() for a in self.namesrv_addr.split(";") if a.strip()]


class StoreSection(_Section):
    store_path_root_dir: str = Field(default_factory=lambda: _home("store"))
    store_path_commit_log: str = ""  # "" → <storePathRootDir>/commitlog
    mapped_file_size_commit_log: int = Field(1024 * 1024 * 1024, ge=4096)
    mapped_file_size_consume_queue: int = Field(300_000 * 20, ge=20)
    flush_disk_type: Literal["ASYNC_FLUSH", "SYNC_FLUSH"] = "ASYNC_FLUSH"
    flush_interval_commit_log: int = Field(500, gt=0)
    flush_commit_log_least_pages: int = Field(4, ge=0)
    flush_commit_log_thorough_interval: int = Field(10_000, gt=0)
    flush_interval_consume_queue: int = Field(1000, gt=0)
    sync_flush_timeout: int = Field(5000, gt=0)
    group_commit_inline: bool = False
    max_message_size: int = Field(4 * 1024 * 1024, gt=0, le=16 * 1024 * 1024 - 4096)
    file_reserved_time: int = Field(72, gt=0)
    delete_when: str = "04"
    disk_max_used_space_ratio: int = Field(75, ge=10, le=95)
    disk_space_warning_level_ratio: int = Field(90, ge=10, le=99)
    clean_file_forcibly_enable: bool = True
    message_index_enable: bool = True
    check_crc_on_recover: bool = True
    message_delay_level: str = DEFAULT_DELAY_LEVELS
    max_transfer_bytes_on_message_in_memory: int = Field(256 * 1024, gt=0)
    max_transfer_count_on_message_in_memory: int = Field(32, gt=0)
    # RocketMQ 5's timer (messages with any delivery time, broker.services.timer): J MessageStoreConfig names and
    # defaults; the wheel file spans twice timerMaxDelaySec in timerPrecisionMs slots
    timer_wheel_enable: bool = True
    timer_precision_ms: int = Field(1000, ge=10, le=60_000)
    timer_max_delay_sec: int = Field(3 * 24 * 3600, gt=0, le=366 * 24 * 3600)

    @field_validator("message_delay_level")
    @classmethod
    def _levels(cls, v: str) -> str:
        parse_delay_levels(v)
        return v

    @field_validator("delete_when")
    @classmethod
    def _hours(cls, v: str) -> str:
        for h in filter(None, v.split(";")):
            if not h.strip().isdigit() or not 0 <= int(h) <= 23:
                raise ValueError(f"bad hour {h!r}, expected hours 00-23 separated by ';'")
        return v

    @property
    def delay_levels_ms(self) -> tuple[int, ...]:
        return parse_delay_levels(self.message_delay_level)

    @field_validator("mapped_file_size_consume_queue")
    @classmethod
    def _units(cls, v: int) -> int:
        if v % 20:
            raise ValueError("must be a multiple of 20 (the consume-queue unit size)")
        return v

    @property
    def root_dir(self) -> str:
        return os.path.expanduser(self.store_path_root_dir)

    @property
    def commit_log_dir(self) -> str:
        return os.path.expanduser(self.store_path_commit_log) or os.path.join(self.root_dir, "commitlog")

    @property
    def config_dir(self) -> str:
        return os.path.join(self.root_dir, "config")


class FeaturesConfig(_Section):
    auto_create_topic_enable: bool = True
    default_topic_queue_nums: int = Field(8, ge=1, le=1024)
    auto_create_subscription_group: bool = True
    cluster_topic_enable: bool = True
    broker_topic_enable: bool = True
    trace_topic_enable: bool = False
    msg_trace_topic_name: str = "RMQ_SYS_TRACE_TOPIC"
    # request-reply: a reply is also stored in <cluster>_REPLY_TOPIC after it is pushed to the requester
    store_reply_message_enable: bool = True
    long_polling_enable: bool = True
    short_polling_time_mills: int = Field(1000, ge=0)
    flush_consumer_offset_interval: int = Field(5000, gt=0)
    flush_delay_offset_interval: int = Field(10_000, gt=0)
    # a send that waited longer than this behind other requests is answered SYSTEM_BUSY (J BrokerFastFailure)
    wait_time_mills_in_send_queue: int = Field(200, gt=0)
    acl_enable: bool = False
    # transactions (J BrokerConfig): half messages older than transactionTimeOut are checked back every
    # transactionCheckInterval, at most transactionCheckMax times
    transaction_time_out: int = Field(6_000, gt=0)
    transaction_check_max: int = Field(15, ge=1)
    transaction_check_interval: int = Field(60_000, gt=0)
    # refuse prepared (half) transaction messages: NO_PERMISSION "sending transaction message is forbidden"
    reject_transaction_message: bool = False
    # SQL92 subscriptions (MessageSelector.bySql) over remoting pulls; off → SYSTEM_ERROR, as J's default
    enable_property_filter: bool = False


class SecurityConfig(_Section):
    """ACL 1.0, TLS (J's ``tls.*`` names, docs/reference/acl.md §8), connection limits, credentials towards name servers."""

    acl_reload_interval: int = Field(5000, ge=0)  # ms between ACL file checks (J 4.9.3+: 5 s); 0 = no hot reload
    inner_access_key: str = ""  # signs what this broker sends to name servers (J 5.x innerAccessKey)
    inner_secret_key: str = ""
    ha_auth_secret: str = ""  # slaves prove it on the HA port (HMAC over the master's challenge); see broker.ha.auth
    server_max_connections: int = Field(10_000, ge=1)
    server_max_pending_frame_bytes: int = Field(256 * 1024 * 1024, ge=16 * 1024 * 1024)
    tls_server_mode: Literal["disabled", "permissive", "enforcing"] = "disabled"
    tls_enable: bool = False
    tls_test_mode_enable: bool = False
    tls_server_need_client_auth: Literal["none", "optional", "require"] = "none"
    tls_server_key_path: str = ""
    tls_server_key_password: str = ""
    tls_server_cert_path: str = ""
    tls_server_trust_cert_path: str = ""
    tls_client_key_path: str = ""
    tls_client_key_password: str = ""
    tls_client_cert_path: str = ""
    tls_client_auth_server: bool = False
    tls_client_trust_cert_path: str = ""


_EXPORTER_TYPES = {"0": "DISABLE", "1": "OTLP_GRPC", "2": "PROM", "3": "LOG"}


class ObservabilityConfig(_Section):
    """Metrics (J 5.x keys) and log files (see README "Observability")."""

    metrics_exporter_type: Literal["DISABLE", "PROM"] = "DISABLE"
    metrics_prom_exporter_host: str = ""  # "" → brokerIP1, as J
    metrics_prom_exporter_port: int = Field(5557, ge=0, le=65535)
    metrics_label: str = ""  # k1:v1,k2:v2 — constant labels on every series
    log_dir: str = Field(default_factory=lambda: _home("logs", "rocketmqlogs"))
    log_level: str = "INFO"  # LEVEL[,logger=LEVEL...]
    log_format: Literal["text", "json"] = "text"
    log_file_max_size: int = Field(128 * 1024 * 1024, ge=0)  # 0 = no log files
    log_file_max_index: int = Field(10, ge=1)

    @field_validator("metrics_exporter_type", mode="before")
    @classmethod
    def _exporter(cls, v: Any) -> Any:
        v = _EXPORTER_TYPES.get(str(v).strip(), str(v).strip().upper())
        if v in ("OTLP_GRPC", "LOG"):
            raise ValueError("only DISABLE and PROM are supported")
        return v

    @field_validator("metrics_label")
    @classmethod
    def _labels(cls, v: str) -> str:
        for pair in filter(None, v.split(",")):
            key, sep, _ = pair.partition(":")
            if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key.strip()):
                raise ValueError(f"bad label {pair!r}, expected name:value[,name:value]")
        return v

    _level = field_validator("log_level")(check_log_levels)

    @property
    def metrics_enabled(self) -> bool:
        return self.metrics_exporter_type == "PROM"

    @property
    def labels(self) -> dict[str, str]:
        return metric_labels(self.metrics_label)


class HASection(_Section):
    """Master/slave replication (J ``MessageStoreConfig`` / ``BrokerConfig`` keys, plus ``haMasterForceWritable``)."""

    ha_master_address: str = ""
    ha_send_heartbeat_interval: int = Field(5000, gt=0)
    ha_housekeeping_interval: int = Field(20_000, gt=0)
    ha_transfer_batch_size: int = Field(32768, ge=1024, le=8 * 1024 * 1024)
    ha_slave_fallbehind_max: int = Field(256 * 1024 * 1024, gt=0)
    slave_timeout: int = Field(3000, gt=0)
    slave_read_enable: bool = False
    access_message_in_memory_max_ratio: int = Field(40, ge=0, le=100)
    # ours: a master that waits for a slave's offsets at start (the name server lists a slave) takes writes anyway
    ha_master_force_writable: bool = False
    # 5.x controller mode (RIP-44; ``broker.ha.replicas``): J's BrokerConfig / MessageStoreConfig keys and defaults
    enable_controller_mode: bool = False
    controller_addr: str = ""
    fetch_controller_addr_by_dns_lookup: bool = False
    controller_heart_beat_timeout_mills: int = Field(10_000, gt=0)
    broker_heartbeat_interval: int = Field(1000, gt=0)
    send_heartbeat_timeout_millis: int = Field(1000, gt=0)
    sync_broker_metadata_period: int = Field(5000, gt=0)
    check_sync_state_set_period: int = Field(5000, gt=0)
    sync_controller_metadata_period: int = Field(10_000, gt=0)
    broker_election_priority: int = 2**31 - 1
    ha_max_time_slave_not_catchup: int = Field(15_000, gt=0)
    in_sync_replicas: int = Field(1, ge=1)
    min_in_sync_replicas: int = Field(1, ge=1)
    all_ack_in_sync_state_set: bool = False
    store_path_epoch_file: str = ""
    store_path_broker_identity: str = ""

    @field_validator("ha_master_address")
    @classmethod
    def _addr(cls, v: str) -> str:
        if v and not _ADDR.match(v.strip()):
            raise ValueError(f"bad address {v!r}, expected host:port")
        return v.strip()


class ProxySection(_Section):
    """The RocketMQ 5 gRPC endpoint (``broker.proxy``), RocketMQ 5 proxy key names (``rmq-proxy.json``)."""

    enable_proxy: bool = False  # ``mqbroker --enable-proxy``
    grpc_server_port: int = Field(8081, ge=0, le=65535)
    default_invisible_time_mills: int = Field(60_000, gt=0)
    min_invisible_time_mills_for_recv: int = Field(10_000, gt=0)
    max_invisible_time_mills: int = Field(12 * 3_600_000, gt=0)
    max_delay_time_mills: int = Field(86_400_000, gt=0)
    user_property_max_num: int = Field(128, gt=0)
    max_user_property_size: int = Field(16 * 1024, gt=0)
    max_message_group_size: int = Field(64, gt=0)
    grpc_client_producer_max_attempts: int = Field(3, gt=0)
    init_pop_offset_by_check_msg_in_mem: bool = True  # J BrokerConfig: a new POP group starts at 0 when it is in memory
    grpc_client_consumer_min_long_polling_timeout_millis: int = Field(5_000, ge=0)
    grpc_client_consumer_max_long_polling_timeout_millis: int = Field(20_000, gt=0)
    grpc_client_consumer_long_polling_batch_size: int = Field(32, gt=0)
    # J 5 BrokerConfig: receives held at once; one more is answered TOO_MANY_REQUESTS "polling full"
    max_pop_polling_size: int = Field(100_000, gt=0)


class BrokerConfig(_Section):
    identity: IdentityConfig = Field(default_factory=IdentityConfig)  # type: ignore[arg-type]
    network: NetworkConfig = Field(default_factory=NetworkConfig)  # type: ignore[arg-type]
    namesrv: NamesrvSection = Field(default_factory=NamesrvSection)  # type: ignore[arg-type]
    store: StoreSection = Field(default_factory=StoreSection)  # type: ignore[arg-type]
    features: FeaturesConfig = Field(default_factory=FeaturesConfig)  # type: ignore[arg-type]
    # the file the config was read from ("" = none): where accepted runtime updates are persisted
    config_file: str = ""
    observability: ObservabilityConfig = Field(default_factory=ObservabilityConfig)  # type: ignore[arg-type]
    ha: HASection = Field(default_factory=HASection)  # type: ignore[arg-type]

    @property
    def fast_listen_port(self) -> int | None:
        """J's fast remoting server ("VIP channel", serving the same requests): ``fastListenPort`` when set (-1: none),
        else listenPort - 2 as J opens it (clients find it that way), 0 (any free port) with listenPort 0."""
        net = self.network
        if "fast_listen_port" in net.model_fields_set:
            return None if net.fast_listen_port < 0 else net.fast_listen_port
        return max(net.listen_port - 2, 0) if net.listen_port else 0

    @property
    def ha_listen_port(self) -> int:
        """The HA port to bind: ``haListenPort`` when set, else listenPort + 1 (J BrokerStartup), 0 with listenPort 0."""
        net = self.network
        if "ha_listen_port" in net.model_fields_set:
            return net.ha_listen_port
        return net.listen_port + 1 if net.listen_port else 0

    security: SecurityConfig = Field(default_factory=SecurityConfig)  # type: ignore[arg-type]

    @model_validator(mode="after")
    def _acl_home(self) -> BrokerConfig:
        if self.features.acl_enable and not self.identity.rocketmq_home:
            raise ValueError("aclEnable=true needs rocketmqHome (the ACL files are <rocketmqHome>/conf/plain_acl.yml)")
        return self

    proxy: ProxySection = Field(default_factory=ProxySection)  # type: ignore[arg-type]


def _k(section: str, field: str, kind: type, important: bool = False) -> Key:
    return Key(field, kind, section, important)


# The ONE mapping from RocketMQ property names onto BrokerConfig. Order = the order ``-p`` prints.
KEYS: dict[str, Key] = {
    "brokerClusterName": _k("identity", "broker_cluster_name", str, True),
    "brokerName": _k("identity", "broker_name", str, True),
    "brokerId": _k("identity", "broker_id", int, True),
    "brokerIP1": _k("identity", "broker_ip1", str, True),
    "brokerIP2": _k("identity", "broker_ip2", str),
    "brokerRole": _k("identity", "broker_role", str, True),
    "brokerPermission": _k("identity", "broker_permission", int, True),
    "regionId": _k("identity", "region_id", str),
    "traceOn": _k("identity", "trace_on", bool),
    "rocketmqHome": _k("identity", "rocketmq_home", str),
    "listenPort": _k("network", "listen_port", int, True),
    "bindAddress": _k("network", "bind_address", str),
    "serverChannelMaxIdleTimeSeconds": _k("network", "server_channel_max_idle_time_seconds", int),
    "channelExpiredTimeout": _k("network", "channel_expired_timeout", int),
    "haListenPort": _k("network", "ha_listen_port", int),
    "fastListenPort": _k("network", "fast_listen_port", int),
    "namesrvAddr": _k("namesrv", "namesrv_addr", str, True),
    "registerNameServerPeriod": _k("namesrv", "register_name_server_period", int),
    "registerBrokerTimeoutMills": _k("namesrv", "register_broker_timeout_mills", int),
    "storePathRootDir": _k("store", "store_path_root_dir", str, True),
    "storePathCommitLog": _k("store", "store_path_commit_log", str, True),
    "mappedFileSizeCommitLog": _k("store", "mapped_file_size_commit_log", int),
    "mappedFileSizeConsumeQueue": _k("store", "mapped_file_size_consume_queue", int),
    "flushDiskType": _k("store", "flush_disk_type", str, True),
    "flushIntervalCommitLog": _k("store", "flush_interval_commit_log", int),
    "flushCommitLogLeastPages": _k("store", "flush_commit_log_least_pages", int),
    "flushCommitLogThoroughInterval": _k("store", "flush_commit_log_thorough_interval", int),
    "flushIntervalConsumeQueue": _k("store", "flush_interval_consume_queue", int),
    "syncFlushTimeout": _k("store", "sync_flush_timeout", int),
    "groupCommitInline": _k("store", "group_commit_inline", bool),
    "maxMessageSize": _k("store", "max_message_size", int, True),
    "fileReservedTime": _k("store", "file_reserved_time", int, True),
    "deleteWhen": _k("store", "delete_when", str, True),
    "diskMaxUsedSpaceRatio": _k("store", "disk_max_used_space_ratio", int),
    "diskSpaceWarningLevelRatio": _k("store", "disk_space_warning_level_ratio", int),
    "cleanFileForciblyEnable": _k("store", "clean_file_forcibly_enable", bool),
    "messageIndexEnable": _k("store", "message_index_enable", bool),
    "checkCRCOnRecover": _k("store", "check_crc_on_recover", bool),
    "messageDelayLevel": _k("store", "message_delay_level", str, True),
    "timerWheelEnable": _k("store", "timer_wheel_enable", bool),
    "timerPrecisionMs": _k("store", "timer_precision_ms", int),
    "timerMaxDelaySec": _k("store", "timer_max_delay_sec", int),
    "maxTransferBytesOnMessageInMemory": _k("store", "max_transfer_bytes_on_message_in_memory", int),
    "maxTransferCountOnMessageInMemory": _k("store", "max_transfer_count_on_message_in_memory", int),
    "autoCreateTopicEnable": _k("features", "auto_create_topic_enable", bool, True),
    "defaultTopicQueueNums": _k("features", "default_topic_queue_nums", int),
    "autoCreateSubscriptionGroup": _k("features", "auto_create_subscription_group", bool, True),
    "clusterTopicEnable": _k("features", "cluster_topic_enable", bool),
    "brokerTopicEnable": _k("features", "broker_topic_enable", bool),
    "traceTopicEnable": _k("features", "trace_topic_enable", bool),
    "msgTraceTopicName": _k("features", "msg_trace_topic_name", str),
    "storeReplyMessageEnable": _k("features", "store_reply_message_enable", bool),
    "longPollingEnable": _k("features", "long_polling_enable", bool),
    "shortPollingTimeMills": _k("features", "short_polling_time_mills", int),
    "flushConsumerOffsetInterval": _k("features", "flush_consumer_offset_interval", int),
    "flushDelayOffsetInterval": _k("features", "flush_delay_offset_interval", int),
    "waitTimeMillsInSendQueue": _k("features", "wait_time_mills_in_send_queue", int),
    "aclEnable": _k("features", "acl_enable", bool, True),
    "transactionTimeOut": _k("features", "transaction_time_out", int),
    "transactionCheckMax": _k("features", "transaction_check_max", int),
    "transactionCheckInterval": _k("features", "transaction_check_interval", int),
    "rejectTransactionMessage": _k("features", "reject_transaction_message", bool),
    "enablePropertyFilter": _k("features", "enable_property_filter", bool, True),
    # observability (J 5.x metrics keys; log keys as README "Observability" documents)
    "metricsExporterType": _k("observability", "metrics_exporter_type", str),
    "metricsPromExporterHost": _k("observability", "metrics_prom_exporter_host", str),
    "metricsPromExporterPort": _k("observability", "metrics_prom_exporter_port", int),
    "metricsLabel": _k("observability", "metrics_label", str),
    "logDir": _k("observability", "log_dir", str),
    "logLevel": _k("observability", "log_level", str),
    "logFormat": _k("observability", "log_format", str),
    "logFileMaxSize": _k("observability", "log_file_max_size", int),
    "logFileMaxIndex": _k("observability", "log_file_max_index", int),
    "haMasterAddress": _k("ha", "ha_master_address", str),
    "haSendHeartbeatInterval": _k("ha", "ha_send_heartbeat_interval", int),
    "haHousekeepingInterval": _k("ha", "ha_housekeeping_interval", int),
    "haTransferBatchSize": _k("ha", "ha_transfer_batch_size", int),
    "haSlaveFallbehindMax": _k("ha", "ha_slave_fallbehind_max", int),
    "slaveTimeout": _k("ha", "slave_timeout", int),
    "slaveReadEnable": _k("ha", "slave_read_enable", bool),
    "accessMessageInMemoryMaxRatio": _k("ha", "access_message_in_memory_max_ratio", int),
    "haMasterForceWritable": _k("ha", "ha_master_force_writable", bool),
    "enableControllerMode": _k("ha", "enable_controller_mode", bool),
    "controllerAddr": _k("ha", "controller_addr", str),
    "fetchControllerAddrByDnsLookup": _k("ha", "fetch_controller_addr_by_dns_lookup", bool),
    "controllerHeartBeatTimeoutMills": _k("ha", "controller_heart_beat_timeout_mills", int),
    "brokerHeartbeatInterval": _k("ha", "broker_heartbeat_interval", int),
    "sendHeartbeatTimeoutMillis": _k("ha", "send_heartbeat_timeout_millis", int),
    "syncBrokerMetadataPeriod": _k("ha", "sync_broker_metadata_period", int),
    "checkSyncStateSetPeriod": _k("ha", "check_sync_state_set_period", int),
    "syncControllerMetadataPeriod": _k("ha", "sync_controller_metadata_period", int),
    "brokerElectionPriority": _k("ha", "broker_election_priority", int),
    "haMaxTimeSlaveNotCatchup": _k("ha", "ha_max_time_slave_not_catchup", int),
    "inSyncReplicas": _k("ha", "in_sync_replicas", int),
    "minInSyncReplicas": _k("ha", "min_in_sync_replicas", int),
    "allAckInSyncStateSet": _k("ha", "all_ack_in_sync_state_set", bool),
    "storePathEpochFile": _k("ha", "store_path_epoch_file", str),
    "storePathBrokerIdentity": _k("ha", "store_path_broker_identity", str),
    "aclReloadInterval": _k("security", "acl_reload_interval", int),
    "innerAccessKey": _k("security", "inner_access_key", str),
    "innerSecretKey": _k("security", "inner_secret_key", str),
    "haAuthSecret": _k("security", "ha_auth_secret", str),
    "serverMaxConnections": _k("security", "server_max_connections", int),
    "serverMaxPendingFrameBytes": _k("security", "server_max_pending_frame_bytes", int),
    "tls.server.mode": _k("security", "tls_server_mode", str),
    "tls.enable": _k("security", "tls_enable", bool),
    "tls.test.mode.enable": _k("security", "tls_test_mode_enable", bool),
    "tls.server.need.client.auth": _k("security", "tls_server_need_client_auth", str),
    "tls.server.keyPath": _k("security", "tls_server_key_path", str),
    "tls.server.keyPassword": _k("security", "tls_server_key_password", str),
    "tls.server.certPath": _k("security", "tls_server_cert_path", str),
    "tls.server.trustCertPath": _k("security", "tls_server_trust_cert_path", str),
    "tls.client.keyPath": _k("security", "tls_client_key_path", str),
    "tls.client.keyPassword": _k("security", "tls_client_key_password", str),
    "tls.client.certPath": _k("security", "tls_client_cert_path", str),
    "tls.client.authServer": _k("security", "tls_client_auth_server", bool),
    "tls.client.trustCertPath": _k("security", "tls_client_trust_cert_path", str),
    # the RocketMQ 5 gRPC endpoint (broker.proxy); enableProxy is what ``mqbroker --enable-proxy`` sets
    "enableProxy": _k("proxy", "enable_proxy", bool, True),
    "grpcServerPort": _k("proxy", "grpc_server_port", int, True),
    "defaultInvisibleTimeMills": _k("proxy", "default_invisible_time_mills", int),
    "minInvisibleTimeMillsForRecv": _k("proxy", "min_invisible_time_mills_for_recv", int),
    "maxInvisibleTimeMills": _k("proxy", "max_invisible_time_mills", int),
    "maxDelayTimeMills": _k("proxy", "max_delay_time_mills", int),
    "userPropertyMaxNum": _k("proxy", "user_property_max_num", int),
    "maxUserPropertySize": _k("proxy", "max_user_property_size", int),
    "maxMessageGroupSize": _k("proxy", "max_message_group_size", int),
    "initPopOffsetByCheckMsgInMem": _k("proxy", "init_pop_offset_by_check_msg_in_mem", bool),
    "grpcClientProducerMaxAttempts": _k("proxy", "grpc_client_producer_max_attempts", int),
    "grpcClientConsumerMinLongPollingTimeoutMillis": _k(
        "proxy", "grpc_client_consumer_min_long_polling_timeout_millis", int
    ),
    "grpcClientConsumerMaxLongPollingTimeoutMillis": _k(
        "proxy", "grpc_client_consumer_max_long_polling_timeout_millis", int
    ),
    "grpcClientConsumerLongPollingBatchSize": _k("proxy", "grpc_client_consumer_long_polling_batch_size", int),
    "maxPopPollingSize": _k("proxy", "max_pop_polling_size", int),
}
# Old J spellings.
ALIASES: dict[str, str] = {
    "mapedFileSizeCommitLog": "mappedFileSizeCommitLog",
    "mapedFileSizeConsumeQueue": "mappedFileSizeConsumeQueue",
}
# Keys RocketMQ 4.9 reads from broker.conf (runtime.java_config_keys) that do nothing here: accepted with one
# warning line naming them, their values checked against J's kind. Adding a key to KEYS takes it off this list.
_TABLE = KeyTable(BrokerConfig, KEYS, BROKER_FILE_KEYS, aliases=ALIASES)
NO_EFFECT_KEYS: frozenset[str] = _TABLE.no_effect
# Printed as ****** by format_config (``-p`` and GET_BROKER_CONFIG).
SECRET_KEYS: frozenset[str] = frozenset(
    {"innerSecretKey", "haAuthSecret", "tls.server.keyPassword", "tls.client.keyPassword"}
)


# canonical_key(key): the RocketMQ key for a key, alias or field name; config_from_properties(text, source,
# overrides, warn=): the config of a properties text. Unknown keys raise ConfigError; keys without effect are
# reported through ``warn``.
canonical_key = _TABLE.canonical
config_from_properties = _TABLE.from_properties


def load_config(
    path: str | os.PathLike[str] | None,
    overrides: Mapping[str, Any] | None = None,
    *,
    warn: Callable[[str], None] = warn_stderr,
) -> BrokerConfig:
    """``broker.conf`` (or the defaults when ``path`` is None) plus overrides (RocketMQ key or field name → value).
    The file's path is kept as ``config_file``: runtime updates (UPDATE_BROKER_CONFIG) are written back to it."""
    cfg = _TABLE.load(path, overrides, warn=warn)
    if path is None:
        return cfg
    return cfg.model_copy(update={"config_file": os.path.abspath(os.fspath(path))})


def format_config(cfg: BrokerConfig, *, important_only: bool = False) -> str:
    """``key=value`` lines in table order (``-p`` prints all, ``-m`` the important ones)."""
    lines = []
    for name, spec in KEYS.items():
        if important_only and not spec.important:
            continue
        value = getattr(getattr(cfg, spec.section), spec.field)
        if name == "storePathCommitLog" and not value:
            value = cfg.store.commit_log_dir
        if name in SECRET_KEYS and value:
            value = "******"  # GET_BROKER_CONFIG answers anyone who may ask: never a secret
        lines.append(f"{name}={str(value).lower() if isinstance(value, bool) else value}")
    return "\n".join(lines) + "\n"
