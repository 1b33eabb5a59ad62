"""Broker configuration: frozen pydantic sections, the ONE table mapping RocketMQ ``broker.conf`` keys onto them, the
Java-properties loader, and the ``-p``/``-m`` printers.

Every key is RocketMQ's name (4.9.x ``BrokerConfig``, ``NettyServerConfig``, ``MessageStoreConfig``); defaults are
RocketMQ's except where a dev box needs something else (``brokerName`` "broker-a" instead of the hostname,
``brokerIP1`` 127.0.0.1 instead of the first non-loopback address). Unknown keys and bad values are an error that
names the key (J silently ignores unknown keys, a known usability trap). A few J keys that people copy from sample
configs are accepted with no effect (``NO_EFFECT_KEYS``).

Accepted but without effect yet: ``brokerIP2``, ``haListenPort`` (only reported as the haServerAddr at
registration), ``flushCommitLogLeastPages``, ``flushCommitLogThoroughInterval``, and ``brokerRole=SLAVE`` (no replication yet).
``serverChannelMaxIdleTimeSeconds`` (0 = never) closes connections idle that long.

Sections: ``identity`` (who this broker is), ``network`` (listener and client channels), ``namesrv`` (registration),
``store`` (the message store; turned into ``broker.store.config.StoreConfig`` by ``broker.app``), ``features``
(auto-create, polling, persistence periods), ``proxy`` (the RocketMQ 5 gRPC endpoint, ``broker.proxy``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from protocol.properties import parse_properties as _parse_properties
from protocol.properties import read_properties_file

DEFAULT_DELAY_LEVELS = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"
_UNIT_MS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_ADDR = re.compile(r"^[A-Za-z0-9_.\-]+:\d{1,5}$")


class ConfigError(ValueError):
    """A config file, flag or override that cannot be used; the message is one line naming the key or line."""


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
    max_message_size: int = Field(4 * 1024 * 1024, gt=0, le=16 * 1024 * 1024 - 4096)
    file_reserved_time: int = Field(72, gt=0)
    delete_when: str = "04"
    disk_max_used_space_ratio: int = Field(75, ge=10, le=95)
    message_index_enable: bool = True
    check_crc_on_recover: bool = True
    message_delay_level: str = DEFAULT_DELAY_LEVELS
    max_transfer_bytes_on_message_in_memory: int = Field(256 * 1024, gt=0)
    max_transfer_count_on_message_in_memory: int = Field(32, gt=0)

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

    @field_validator("acl_enable")
    @classmethod
    def _acl(cls, v: bool) -> bool:
        if v:
            raise ValueError("ACL is not supported yet; only false is accepted")
        return v


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
    proxy: ProxySection = Field(default_factory=ProxySection)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class _Key:
    section: str
    field: str
    kind: type  # int, bool or str
    important: bool = False


def _k(section: str, field: str, kind: type, important: bool = False) -> _Key:
    return _Key(section, field, kind, important)


# The ONE mapping from RocketMQ property names onto BrokerConfig. Order = the order ``-p`` prints.
KEYS: dict[str, _Key] = {
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
    "maxMessageSize": _k("store", "max_message_size", int, True),
    "fileReservedTime": _k("store", "file_reserved_time", int, True),
    "deleteWhen": _k("store", "delete_when", str, True),
    "diskMaxUsedSpaceRatio": _k("store", "disk_max_used_space_ratio", int),
    "messageIndexEnable": _k("store", "message_index_enable", bool),
    "checkCRCOnRecover": _k("store", "check_crc_on_recover", bool),
    "messageDelayLevel": _k("store", "message_delay_level", str, True),
    "maxTransferBytesOnMessageInMemory": _k("store", "max_transfer_bytes_on_message_in_memory", int),
    "maxTransferCountOnMessageInMemory": _k("store", "max_transfer_count_on_message_in_memory", int),
    "autoCreateTopicEnable": _k("features", "auto_create_topic_enable", bool, True),
    "defaultTopicQueueNums": _k("features", "default_topic_queue_nums", int),
    "autoCreateSubscriptionGroup": _k("features", "auto_create_subscription_group", bool, True),
    "clusterTopicEnable": _k("features", "cluster_topic_enable", bool),
    "brokerTopicEnable": _k("features", "broker_topic_enable", bool),
    "traceTopicEnable": _k("features", "trace_topic_enable", bool),
    "msgTraceTopicName": _k("features", "msg_trace_topic_name", str),
    "longPollingEnable": _k("features", "long_polling_enable", bool),
    "shortPollingTimeMills": _k("features", "short_polling_time_mills", int),
    "flushConsumerOffsetInterval": _k("features", "flush_consumer_offset_interval", int),
    "flushDelayOffsetInterval": _k("features", "flush_delay_offset_interval", int),
    "waitTimeMillsInSendQueue": _k("features", "wait_time_mills_in_send_queue", int),
    "aclEnable": _k("features", "acl_enable", bool, True),
    "transactionTimeOut": _k("features", "transaction_time_out", int),
    "transactionCheckMax": _k("features", "transaction_check_max", int),
    "transactionCheckInterval": _k("features", "transaction_check_interval", int),
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
# J keys people copy from sample configs that do nothing here; accepted so such files load.
NO_EFFECT_KEYS: frozenset[str] = frozenset(
    {"sendMessageThreadPoolNums", "pullMessageThreadPoolNums", "useEpollNativeSelector"}
)
_BY_FIELD: dict[tuple[str, str], str] = {(s.section, s.field): k for k, s in KEYS.items()}


def canonical_key(key: str) -> str:
    """The RocketMQ key for ``key`` (accepts aliases and python field names); raises ConfigError if unknown."""
    key = ALIASES.get(key, key)
    if key in KEYS:
        return key
    for name, spec in KEYS.items():
        if spec.field == key:
            return name
    raise ConfigError(f"unknown config key '{key}'")


def parse_properties(text: str, source: str = "<config>") -> list[tuple[int, str, str]]:
    """Java-properties lines → ``(line_no, key, value)`` (``protocol.properties``); a bad line is a ConfigError."""
    return _parse_properties(text, source, ConfigError)


def _convert(key: str, kind: type, value: Any) -> Any:
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        if kind is str and isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        return value
    if kind is int:
        try:
            return int(value.strip())
        except ValueError:
            raise ConfigError(f"{key}={value} is not a valid integer") from None
    if kind is bool:
        low = value.strip().lower()
        if low not in ("true", "false"):
            raise ConfigError(f"{key}={value} is not a valid boolean (true/false)")
        return low == "true"
    return value


def _collect(items: Iterable[tuple[str, Any]], into: dict[str, dict[str, Any]], where: str = "") -> None:
    for key, value in items:
        if key in NO_EFFECT_KEYS:
            continue
        try:
            name = canonical_key(key)
            spec = KEYS[name]
            into.setdefault(spec.section, {})[spec.field] = _convert(name, spec.kind, value)
        except ConfigError as exc:
            raise ConfigError(f"{where}{exc}") from None


def _build(sections: dict[str, dict[str, Any]], where: str = "") -> BrokerConfig:
    try:
        return BrokerConfig.model_validate(sections)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [str(p) for p in err["loc"]]
        msg = str(err["msg"]).removeprefix("Value error, ")
        if len(loc) >= 2:
            key = _BY_FIELD.get((loc[0], loc[1]), loc[1])
            value = sections.get(loc[0], {}).get(loc[1])
            shown = str(value).lower() if isinstance(value, bool) else value
            raise ConfigError(f"{where}{key}={shown}: {msg}") from None
        raise ConfigError(f"{where}{msg}") from None


def config_from_properties(
    text: str, source: str = "<config>", overrides: Mapping[str, Any] | None = None
) -> BrokerConfig:
    sections: dict[str, dict[str, Any]] = {}
    for no, key, value in parse_properties(text, source):
        _collect([(key, value)], sections, f"{source} line {no}: ")
    _collect((overrides or {}).items(), sections)
    return _build(sections, f"{source}: " if text else "")


def load_config(path: str | os.PathLike[str] | None, overrides: Mapping[str, Any] | None = None) -> BrokerConfig:
    """``broker.conf`` (or the defaults when ``path`` is None) plus overrides (RocketMQ key or field name → value)."""
    if path is None:
        return config_from_properties("", "<defaults>", overrides)
    text = read_properties_file(path, ConfigError)
    return config_from_properties(text, os.fspath(path), overrides)


def format_config(cfg: BrokerConfig, *, important_only: bool = False) -> str:
    """``key=value`` lines in table order (``-p`` prints all, ``-m`` the important ones)."""
    lines = []
    for name, spec in KEYS.items():
        if important_only and not spec.important:
            continue
        value = getattr(getattr(cfg, spec.section), spec.field)
        if name == "storePathCommitLog" and not value:
            value = cfg.store.commit_log_dir
        lines.append(f"{name}={str(value).lower() if isinstance(value, bool) else value}")
    return "\n".join(lines) + "\n"
