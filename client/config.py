"""Client configuration: how to reach the cluster (``ClientConfig``) apart from how each client behaves
(``ProducerConfig``, ``PushConsumerConfig``, ``PullConsumerConfig``). Frozen pydantic models, RocketMQ's defaults.

Constructors take the fields as keyword options and validate them here, so a misspelt option fails at once with its
name (``extra="forbid"``)::

    Producer("group", namesrv_addr="a:9876;b:9876", instance_name="orders", send_timeout_ms=5000)

``split_options`` sorts one ``**options`` dict into the client part and the behaviour part.

Intervals are in seconds unless the name says ``_ms`` (where the J client's name has it); sizes follow the J names
(``pull_threshold_size_for_queue`` is in MiB as in J).
"""

from __future__ import annotations

import os
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from client.consumer.allocate import Strategy
from protocol.codes import SerializeType

DEFAULT_NAMESRV = "127.0.0.1:9876"
MAX_RECONSUME_TIMES_DEFAULT = 16


class _Config(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)


class ClientConfig(_Config):
    """Shared by every client of one ``ClientInstance``: name servers, identity, timers, timeouts."""

    namesrv_addr: str = Field(default_factory=lambda: os.environ.get("NAMESRV_ADDR", DEFAULT_NAMESRV))
    """``"host:port"`` or several separated by ``;`` (failover in order)."""
    instance_name: str | None = None
    """The part after ``@`` in the client id; ``None`` = the process id (``DEFAULT`` for broadcasting consumers)."""
    client_ip: str | None = None
    """The part before ``@``; ``None`` = the address of the interface that routes outwards."""
    serialize_type: Literal["JSON", "MSGPACK"] = "MSGPACK"
    """Header encoding towards brokers. ``MSGPACK``: JSON on each connection, asking for msgpack, until the broker
    offers it (rocketq brokers do), then msgpack (faster); any other RocketMQ keeps getting JSON. ``JSON``: always."""
    poll_namesrv_interval: float = Field(default=30.0, gt=0)
    heartbeat_broker_interval: float = Field(default=30.0, gt=0)
    request_timeout: float = Field(default=3.0, gt=0)
    """Timeout of ordinary requests (routes, offsets, heartbeats); sends and pulls have their own."""
    connect_timeout: float = Field(default=3.0, gt=0)
    access_key: str | None = None
    """ACL 1.0 credentials: with ``access_key`` and ``secret_key`` set every request is signed (J AclClientRPCHook)."""
    secret_key: str | None = None
    security_token: str | None = None
    use_tls: bool = False
    """Dial brokers and name servers over TLS (J ``tls.enable``)."""
    tls_trust_cert_path: str | None = None
    """PEM CA bundle to verify servers with; ``None`` = trust any certificate (J ``tls.test.mode.enable``)."""
    tls_cert_path: str | None = None
    """Client certificate chain (PEM) and key, for servers that require mutual TLS."""
    tls_key_path: str | None = None

    @field_validator("namesrv_addr")
    @classmethod
    def _addrs(cls, v: str) -> str:
        if not parse_namesrv(v):
            raise ValueError(f"no name server address in {v!r}")
        return v

    @property
    def namesrv_addrs(self) -> list[str]:
        return parse_namesrv(self.namesrv_addr)

    @property
    def serialize(self) -> SerializeType:
        return SerializeType[self.serialize_type]


def parse_namesrv(addr: str) -> list[str]:
    """``"a:9876;b:9876"`` (``,`` also accepted) → ``["a:9876", "b:9876"]``."""
    return [a.strip() for a in addr.replace(",", ";").split(";") if a.strip()]


class ProducerConfig(_Config):
    send_timeout_ms: int = Field(default=3000, gt=0)
    """Budget of one ``send`` including its retries."""
    retry_times_when_send_failed: int = Field(default=2, ge=0)
    retry_another_broker_when_not_store_ok: bool = False
    """Retry a FLUSH_DISK_TIMEOUT / FLUSH_SLAVE_TIMEOUT / SLAVE_NOT_AVAILABLE reply (J: false, return it)."""
    compress_msg_body_over_howmuch: int = Field(default=4096, ge=0)
    compress_level: int = Field(default=5, ge=1, le=9)
    max_message_size: int = Field(default=4 * 1024 * 1024, gt=0)
    default_topic_queue_nums: int = Field(default=4, gt=0)
    send_latency_fault_enable: bool = False
    """Avoid brokers that were slow or failing for a while (J's MQFaultStrategy)."""


ConsumeFrom = Literal["LAST_OFFSET", "FIRST_OFFSET", "TIMESTAMP"]


class _ConsumerConfig(_Config):
    consume_from_where: ConsumeFrom = "LAST_OFFSET"
    """Where a queue with no committed offset starts (``CONSUME_FROM_`` prefix accepted)."""
    consume_timestamp: int | None = None
    """Start time in ms for TIMESTAMP; ``None`` = half an hour ago (J's default)."""
    pull_batch_size: int = Field(default=32, gt=0, le=1024)
    pull_threshold_for_queue: int = Field(default=1000, gt=0)
    """Flow control: stop pulling a queue while this many of its messages are cached."""
    pull_threshold_size_for_queue: int = Field(default=100, gt=0)
    """Flow control: stop pulling a queue while its cached bodies exceed this many MiB."""
    suspend_timeout_ms: int = Field(default=15_000, ge=0)
    """How long the broker may hold a pull with no message (long polling)."""
    pull_timeout_ms: int = Field(default=30_000, gt=0)
    """Client timeout of a long-polling pull (J ``consumerTimeoutMillisWhenSuspend``)."""
    allocate_strategy: Strategy | None = None
    """How the group's queues are shared; ``None`` = averagely (``client.consumer.allocate``)."""
    rebalance_interval: float = Field(default=20.0, gt=0)

    @field_validator("consume_from_where", mode="before")
    @classmethod
    def _from_where(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = v.upper().removeprefix("CONSUME_FROM_")
            v = {"MIN_OFFSET": "FIRST_OFFSET", "MAX_OFFSET": "LAST_OFFSET"}.get(v, v)
        return v

    @model_validator(mode="after")
    def _threshold_vs_batch(self) -> _ConsumerConfig:
        if self.pull_batch_size > self.pull_threshold_for_queue:
            raise ValueError("pull_batch_size must not exceed pull_threshold_for_queue")
        return self

    @property
    def threshold_bytes(self) -> int:
        return self.pull_threshold_size_for_queue * 1024 * 1024


class PushConsumerConfig(_ConsumerConfig):
    message_model: Literal["CLUSTERING", "BROADCASTING"] = "CLUSTERING"
    orderly: bool = False
    """Consume each queue one batch at a time in offset order, holding the queue's broker lock."""
    consume_message_batch_max_size: int = Field(default=1, gt=0)
    consume_thread_max: int = Field(default=20, gt=0)
    """Listener calls in flight at once (async listeners) / worker threads (plain functions)."""
    consume_concurrently_max_span: int = Field(default=2000, gt=0)
    """Stop pulling a queue while the offsets in flight span more than this (one stuck message)."""
    max_reconsume_times: int = -1
    """Redeliveries before the dead-letter queue; -1 = 16 (J)."""
    consume_timeout: float = Field(default=15.0, gt=0)
    """Minutes after which an unfinished message is sent back (level 3) and no longer holds the offset."""
    suspend_current_queue_time_ms: int = Field(default=1000, ge=0)
    """Orderly: pause of a queue after its listener asked to retry."""
    pull_interval_ms: int = Field(default=0, ge=0)
    persist_consumer_offset_interval_ms: int = Field(default=5000, gt=0)
    offset_store_dir: str = Field(default_factory=lambda: os.environ.get("ROCKETMQ_OFFSETS_DIR", "~/.rocketmq_offsets"))
    """Broadcasting only: where the local offset files live."""
    drain_timeout: float = Field(default=5.0, ge=0)
    """At close, how long to wait for listener calls in flight."""

    @property
    def effective_max_reconsume_times(self) -> int:
        return MAX_RECONSUME_TIMES_DEFAULT if self.max_reconsume_times < 0 else self.max_reconsume_times


class PullConsumerConfig(_ConsumerConfig):
    auto_commit: bool = False
    """Commit the positions of polled messages every ``auto_commit_interval`` s (and at close)."""
    auto_commit_interval: float = Field(default=5.0, gt=0)
    pull_timeout_ms: int = Field(default=30_000, gt=0)


C = TypeVar("C", bound=BaseModel)


def split_options(options: dict[str, Any], behaviour: type[C]) -> tuple[ClientConfig, C]:
    """One ``**options`` dict → (ClientConfig, behaviour config). Unknown keys raise ``ValueError`` naming them."""
    client_keys = set(ClientConfig.model_fields)
    own_keys = set(behaviour.model_fields)
    unknown = sorted(set(options) - client_keys - own_keys)
    if unknown:
        raise ValueError(f"unknown option(s) for {behaviour.__name__.removesuffix('Config')}: {', '.join(unknown)}")
    client = ClientConfig(**{k: v for k, v in options.items() if k in client_keys and v is not None})
    own = behaviour(**{k: v for k, v in options.items() if k in own_keys})
    return client, own
