"""Options of the ``rocketmq`` Spark data source: the tables, parsing and validation (pure; pydantic models).

Spark hands a data source its options as a case-insensitive dict of strings. :func:`parse_source_options` and
:func:`parse_sink_options` turn them into frozen models and fail on anything unknown or contradictory with an
:class:`OptionError` whose message names the option — so a typo fails the query at start, not hours later.

Source options (Spark's Kafka-source names where the concept is the same):

================================ ============== ==============================================================
option                           default        meaning
================================ ============== ==============================================================
namesrvAddr                      (required)     name servers, ``host:port[;host:port]``
subscribe                        —              comma-separated topics (exactly one of subscribe/subscribePattern/
                                                assign)
subscribePattern                 —              Python regex, full match against every topic on the name server
assign                           —              JSON ``{topic: {brokerName: [queueId, ...]}}`` or ``{topic: [queueId]}``
                                                (those ids on every broker): exactly these queues
subExpression                    ``*``          tag filter ``tagA || tagB``; offsets still count filtered messages
startingOffsets                  latest/earl.   ``earliest``, ``latest`` (streaming only) or offset JSON
                                                ``{topic: {brokerName: {queueId: offset}}}`` with -2 = earliest,
                                                -1 = latest; queues not listed start at earliest
startingOffsetsByTimestamp       —              JSON of the same shape, epoch-ms values; unlisted queues: earliest
startingTimestamp                —              one epoch-ms timestamp for every queue
startingOffsetsForUnlistedQueues earliest       where queues missing from the JSON start: earliest | latest | error
endingOffsets                    latest         batch only: ``latest`` or offset JSON (-1 = latest; -2 refused)
endingOffsetsByTimestamp         —              batch only: JSON of epoch-ms values; unlisted queues end at latest
endingTimestamp                  —              batch only: one epoch-ms timestamp for every queue
maxOffsetsPerTrigger             —              cap per micro-batch, split over queues by backlog (ReadMaxRows)
minOffsetsPerTrigger             —              wait for at least this many new offsets ...
maxTriggerDelay                  15m            ... but no longer than this (``500ms``, ``30s``, ``15m``, ``1h``)
failOnDataLoss                   true           fail when offsets were expired/removed; false = skip with a warning
includeProperties                true           add the ``properties`` map column
consumerGroup                    —              commit processed offsets to the broker for this group (lag only)
pullBatchSize                    256            messages per pull request (the broker caps it at its
                                                maxTransferCountOnMessageInMemory / ...BytesOnMessageInMemory)
pullsInFlight                    4              pipelined pull requests per task
pollTimeoutMs                    10000          timeout of one pull / admin request
fetchRetries                     8              retries of a failed pull / route / offset look-up, then fail
fetchRetryBackoffMs              250            first retry delay; doubles per retry, at most 10 s
minPartitions                    —              split queue ranges until there are at least this many tasks
maxRecordsPerPartition           —              split queue ranges longer than this
accessKey / secretKey            —              ACL 1.0 credentials: every request is signed (both or neither)
useTLS                           false          dial the name servers and brokers over TLS
tlsTrustCertPath                 —              PEM CA bundle to verify them with (none: not verified)
tlsCertPath / tlsKeyPath         —              client certificate and key (PEM), for mutual TLS (both or neither)
================================ ============== ==============================================================

The options are all that reaches the executors: each Python worker opens its own connections from them (paths of
certificate files must exist on every executor host).

Only one of startingOffsets / startingOffsetsByTimestamp / startingTimestamp may be given. Sink options: namesrvAddr
(required), topic (overrides the ``topic`` column), producerGroup, sendTimeoutMs, sendBatchMaxBytes (512 KiB),
sendBatchMaxMessages (1024), sendsInFlight (4), accessKey / secretKey, useTLS, tlsTrustCertPath, tlsCertPath /
tlsKeyPath.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from client.message import is_valid_name  # RocketMQ's topic / group name rule (protocol.rules)
from spark_connector.offsets import EARLIEST, LATEST, OffsetFormatError, OffsetMap, from_json_dict

_ADDR = re.compile(r"^[A-Za-z0-9_.\-]+:\d{1,5}$")
_DURATION = re.compile(r"^\s*(\d+)\s*(us|ms|s|sec|m|min|h|d)?\s*$", re.IGNORECASE)
_DURATION_MS = {
    "us": 0.001,
    "ms": 1,
    "s": 1000,
    "sec": 1000,
    "m": 60_000,
    "min": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
}

DEFAULT_MAX_TRIGGER_DELAY_MS = 15 * 60 * 1000

# Option name → pydantic field, one table per side. Spark lower-cases keys; the tables give the spelling back.
# the client's security options, the same keys for a source and a sink
_SECURITY_OPTIONS: dict[str, str] = {
    "accessKey": "access_key",
    "secretKey": "secret_key",
    "useTLS": "use_tls",
    "tlsTrustCertPath": "tls_trust_cert_path",
    "tlsCertPath": "tls_cert_path",
    "tlsKeyPath": "tls_key_path",
}
SOURCE_OPTIONS: dict[str, str] = {
    "namesrvAddr": "namesrv_addr",
    "subscribe": "subscribe",
    "subscribePattern": "subscribe_pattern",
    "assign": "assign",
    "subExpression": "sub_expression",
    "startingOffsets": "starting_offsets",
    "startingOffsetsByTimestamp": "starting_offsets_by_timestamp",
    "startingTimestamp": "starting_timestamp",
    "startingOffsetsForUnlistedQueues": "starting_offsets_for_unlisted_queues",
    "endingOffsets": "ending_offsets",
    "endingOffsetsByTimestamp": "ending_offsets_by_timestamp",
    "endingTimestamp": "ending_timestamp",
    "maxOffsetsPerTrigger": "max_offsets_per_trigger",
    "minOffsetsPerTrigger": "min_offsets_per_trigger",
    "maxTriggerDelay": "max_trigger_delay_ms",
    "failOnDataLoss": "fail_on_data_loss",
    "includeProperties": "include_properties",
    "consumerGroup": "consumer_group",
    "pullBatchSize": "pull_batch_size",
    "pullsInFlight": "pulls_in_flight",
    "pollTimeoutMs": "poll_timeout_ms",
    "fetchRetries": "fetch_retries",
    "fetchRetryBackoffMs": "fetch_retry_backoff_ms",
    "minPartitions": "min_partitions",
    "maxRecordsPerPartition": "max_records_per_partition",
    **_SECURITY_OPTIONS,
}
SINK_OPTIONS: dict[str, str] = {
    "namesrvAddr": "namesrv_addr",
    "topic": "topic",
    "producerGroup": "producer_group",
    "sendTimeoutMs": "send_timeout_ms",
    "sendBatchMaxBytes": "send_batch_max_bytes",
    "sendBatchMaxMessages": "send_batch_max_messages",
    "sendsInFlight": "sends_in_flight",
    **_SECURITY_OPTIONS,
}
# Keys Spark itself may put into a data source's options; never ours, never an error.
SPARK_KEYS: frozenset[str] = frozenset({"path", "paths", "checkpointlocation", "queryname"})


class OptionError(ValueError):
    """A bad, unknown or contradictory option. The message names the option."""


@dataclass(frozen=True)
class StartSpec:
    """Where a query starts: ``kind`` earliest | latest | offsets | timestamp.

    ``offsets`` holds per-queue values for kind "offsets" (offsets, or EARLIEST / LATEST) and for kind "timestamp"
    (per-queue epoch ms); ``timestamp`` is the one timestamp of ``startingTimestamp``. Queues missing from ``offsets``
    start where ``unlisted`` says (``startingOffsetsForUnlistedQueues``: earliest, latest, or error).
    """

    kind: Literal["earliest", "latest", "offsets", "timestamp"]
    offsets: OffsetMap = field(default_factory=dict)
    timestamp: int | None = None
    unlisted: Literal["earliest", "latest", "error"] = "earliest"


@dataclass(frozen=True)
class EndSpec:
    """Where a batch query ends: kind latest, offsets (per queue; LATEST allowed; unlisted queues: latest) or
    timestamp (``timestamp`` for every queue, or per-queue epoch ms in ``offsets``; unlisted queues: latest)."""

    kind: Literal["latest", "offsets", "timestamp"]
    offsets: OffsetMap = field(default_factory=dict)
    timestamp: int | None = None


def parse_duration_ms(text: str) -> int:
    """``"15m"`` → 900000. Units us, ms, s, m/min, h, d as Spark's ``timeStringAsMs``; a bare number is ms."""
    m = _DURATION.match(text)
    if not m:
        raise ValueError(f"expected a duration such as 500ms, 30s, 15m or 1h, got {text!r}")
    return int(int(m.group(1)) * _DURATION_MS[(m.group(2) or "ms").lower()])


def _addr_list(v: str) -> str:
    addrs = [a.strip() for a in v.split(";") if a.strip()]
    if not addrs:
        raise ValueError("must not be empty")
    for addr in addrs:
        if not _ADDR.match(addr):
            raise ValueError(f"bad name server address {addr!r}, expected host:port[;host:port]")
    return ";".join(addrs)


@dataclass(frozen=True, slots=True)
class Security:
    """How every client of the connector dials and signs: ACL 1.0 keys and TLS (plain values, picklable, hashable:
    the executors' cached sessions are keyed by it)."""

    access_key: str | None = None
    secret_key: str | None = None
    use_tls: bool = False
    tls_trust_cert_path: str | None = None
    tls_cert_path: str | None = None
    tls_key_path: str | None = None


class _Options(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    namesrv_addr: str = Field(alias="namesrvAddr")
    # ACL 1.0: with both set, every request the connector sends is signed (README "Security")
    access_key: str | None = Field(None, min_length=1, alias="accessKey")
    secret_key: str | None = Field(None, min_length=1, alias="secretKey")
    use_tls: bool = Field(False, alias="useTLS")
    tls_trust_cert_path: str | None = Field(None, min_length=1, alias="tlsTrustCertPath")
    tls_cert_path: str | None = Field(None, min_length=1, alias="tlsCertPath")
    tls_key_path: str | None = Field(None, min_length=1, alias="tlsKeyPath")

    @model_validator(mode="after")
    def _both_keys(self) -> _Options:
        if (self.access_key is None) != (self.secret_key is None):
            raise ValueError("accessKey and secretKey go together: give both or neither")
        if (self.tls_cert_path is None) != (self.tls_key_path is None):
            raise ValueError("tlsCertPath and tlsKeyPath go together: give both or neither")
        if not self.use_tls and (self.tls_trust_cert_path or self.tls_cert_path):
            raise ValueError("tlsTrustCertPath / tlsCertPath / tlsKeyPath need useTLS=true")
        return self

    @field_validator("namesrv_addr")
    @classmethod
    def _addr(cls, v: str) -> str:
        return _addr_list(v)

    @property
    def namesrv_addrs(self) -> list[str]:
        return self.namesrv_addr.split(";")

    @property
    def security(self) -> Security:
        """The ACL keys and TLS settings every client of the connector is started with."""
        return Security(
            self.access_key,
            self.secret_key,
            self.use_tls,
            self.tls_trust_cert_path,
            self.tls_cert_path,
            self.tls_key_path,
        )


class SourceOptions(_Options):
    """Validated options of the streaming source and the batch reader (see the module table)."""

    subscribe: tuple[str, ...] = Field((), alias="subscribe")
    subscribe_pattern: str | None = Field(None, alias="subscribePattern")
    assign: str | None = Field(None, alias="assign")
    sub_expression: str = Field("*", alias="subExpression")
    starting_offsets: str | None = Field(None, alias="startingOffsets")
    starting_offsets_by_timestamp: str | None = Field(None, alias="startingOffsetsByTimestamp")
    starting_timestamp: int | None = Field(None, ge=0, alias="startingTimestamp")
    starting_offsets_for_unlisted_queues: Literal["earliest", "latest", "error"] = Field(
        "earliest", alias="startingOffsetsForUnlistedQueues"
    )
    ending_offsets: str | None = Field(None, alias="endingOffsets")
    ending_offsets_by_timestamp: str | None = Field(None, alias="endingOffsetsByTimestamp")
    ending_timestamp: int | None = Field(None, ge=0, alias="endingTimestamp")
    max_offsets_per_trigger: int | None = Field(None, gt=0, alias="maxOffsetsPerTrigger")
    min_offsets_per_trigger: int | None = Field(None, gt=0, alias="minOffsetsPerTrigger")
    max_trigger_delay_ms: int | None = Field(None, ge=0, alias="maxTriggerDelay")
    fail_on_data_loss: bool = Field(True, alias="failOnDataLoss")
    include_properties: bool = Field(True, alias="includeProperties")
    consumer_group: str | None = Field(None, alias="consumerGroup")
    pull_batch_size: int = Field(256, gt=0, le=100_000, alias="pullBatchSize")
    pulls_in_flight: int = Field(4, gt=0, le=64, alias="pullsInFlight")
    poll_timeout_ms: int = Field(10_000, gt=0, alias="pollTimeoutMs")
    fetch_retries: int = Field(8, ge=0, le=100, alias="fetchRetries")
    fetch_retry_backoff_ms: int = Field(250, ge=0, alias="fetchRetryBackoffMs")
    min_partitions: int | None = Field(None, gt=0, alias="minPartitions")
    max_records_per_partition: int | None = Field(None, gt=0, alias="maxRecordsPerPartition")

    # Derived in _finish(); not options themselves.
    start: StartSpec = Field(default_factory=lambda: StartSpec("latest"), exclude=True)
    end: EndSpec = Field(default_factory=lambda: EndSpec("latest"), exclude=True)
    streaming: bool = Field(True, exclude=True)
    assigned: tuple[tuple[str, str | None, int], ...] = Field((), exclude=True)

    @field_validator("subscribe", mode="before")
    @classmethod
    def _topics(cls, v: Any) -> Any:
        if isinstance(v, str):
            topics = tuple(t.strip() for t in v.split(",") if t.strip())
            if not topics:
                raise ValueError("must name at least one topic")
            for t in topics:
                if not is_valid_name(t):
                    raise ValueError(f"bad topic name {t!r} (letters, digits, %|_- only, at most 255)")
            return tuple(dict.fromkeys(topics))
        return v

    @field_validator("subscribe_pattern")
    @classmethod
    def _pattern(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression: {exc}") from None
        return v

    @field_validator("sub_expression")
    @classmethod
    def _sub_expression(cls, v: str) -> str:
        tags = [t.strip() for t in v.split("||")]
        if v.strip() in ("", "*"):
            return "*"
        if any(not t or t == "*" for t in tags):
            raise ValueError(f"expected '*' or tags joined by '||' (e.g. 'tagA || tagB'), got {v!r}")
        return " || ".join(tags)

    @field_validator("max_trigger_delay_ms", mode="before")
    @classmethod
    def _delay(cls, v: Any) -> Any:
        return parse_duration_ms(v) if isinstance(v, str) else v

    @field_validator("consumer_group")
    @classmethod
    def _group(cls, v: str | None) -> str | None:
        if v is not None and not is_valid_name(v):
            raise ValueError(f"bad group name {v!r} (letters, digits, %|_- only, at most 255)")
        return v

    @property
    def trigger_delay_ms(self) -> int:
        """The effective ``maxTriggerDelay`` in ms."""
        return DEFAULT_MAX_TRIGGER_DELAY_MS if self.max_trigger_delay_ms is None else self.max_trigger_delay_ms

    def matches(self, topic: str) -> bool:
        """Whether ``topic`` belongs to the subscription (explicit list or full-match pattern)."""
        if self.subscribe_pattern is not None:
            return re.fullmatch(self.subscribe_pattern, topic) is not None
        if self.assigned:
            return any(t == topic for t, _, _ in self.assigned)
        return topic in self.subscribe

    def is_assigned(self, topic: str, broker: str, queue_id: int) -> bool:
        """With ``assign``: whether the queue is one of the assigned ones (a ``None`` broker = every broker)."""
        return any(t == topic and b in (None, broker) and q == queue_id for t, b, q in self.assigned)

    @property
    def fetch_backoff_s(self) -> list[float]:
        """The delays before each retry of a failed fetch: ``fetchRetryBackoffMs`` doubling, at most 10 s each."""
        return [min(self.fetch_retry_backoff_ms * 2**i, 10_000) / 1000 for i in range(self.fetch_retries)]


class SinkOptions(_Options):
    """Validated options of the sink (``write`` / ``writeStream``)."""

    topic: str | None = Field(None, alias="topic")
    producer_group: str = Field("spark-rocketmq-sink", alias="producerGroup")
    send_timeout_ms: int = Field(3000, gt=0, alias="sendTimeoutMs")
    send_batch_max_bytes: int = Field(524_288, gt=0, alias="sendBatchMaxBytes")
    send_batch_max_messages: int = Field(1024, gt=0, le=10_000, alias="sendBatchMaxMessages")
    sends_in_flight: int = Field(4, gt=0, le=256, alias="sendsInFlight")

    @field_validator("topic", "producer_group")
    @classmethod
    def _name(cls, v: str | None) -> str | None:
        if v is not None and not is_valid_name(v):
            raise ValueError(f"bad name {v!r} (letters, digits, %|_- only, at most 255)")
        return v


def _canonical(raw: Mapping[str, str], table: dict[str, str], side: str, other: dict[str, str]) -> dict[str, str]:
    by_lower = {name.lower(): name for name in table}
    other_lower = {name.lower(): name for name in other}
    out: dict[str, str] = {}
    for key, value in raw.items():
        low = key.lower()
        if low in by_lower:
            out[by_lower[low]] = value
        elif low in SPARK_KEYS:
            continue
        elif low in other_lower:
            raise OptionError(f"rocketmq {side}: option '{other_lower[low]}' is not a {side} option")
        else:
            close = difflib.get_close_matches(low, by_lower, n=1, cutoff=0.75)
            hint = f"did you mean '{by_lower[close[0]]}'?" if close else "known options: " + ", ".join(sorted(table))
            raise OptionError(f"rocketmq {side}: unknown option '{key}' ({hint})")
    return out


def _raise_validation(exc: ValidationError, side: str) -> OptionError:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        if loc:
            shown = err.get("input")
            got = f" (got {shown!r})" if isinstance(shown, str) and repr(shown) not in msg else ""
            parts.append(f"option '{loc}': {msg}{got}")
        else:
            parts.append(msg)
    return OptionError(f"rocketmq {side}: " + "; ".join(parts))


def _json_offsets(opts: SourceOptions, name: str, text: str, min_value: int) -> OffsetMap:
    try:
        data = json.loads(text)
        parsed = from_json_dict(data, what=f"option '{name}'", min_value=min_value)
    except json.JSONDecodeError as exc:
        raise OptionError(f"rocketmq source: option '{name}' is neither a keyword nor valid JSON ({exc.msg})") from None
    except OffsetFormatError as exc:
        raise OptionError(f"rocketmq source: {exc}") from None
    for topic in data:
        if not opts.matches(topic):
            raise OptionError(f"rocketmq source: option '{name}' names topic {topic!r}, which is not subscribed")
    return parsed


def _given(*options: tuple[str, object]) -> list[str]:
    """The names of the ``(name, value)`` options that were given (not None)."""
    return [name for name, value in options if value is not None]


def _only_one(given: list[str], position: str) -> None:
    """At most one of the ``given`` options of a starting or ending position: more contradict each other."""
    if len(given) > 1:
        raise OptionError(
            f"rocketmq source: options {' and '.join(repr(g) for g in given)} contradict each other;"
            f" give only one {position} position"
        )


def _start_spec(opts: SourceOptions, streaming: bool) -> StartSpec:
    given = _given(
        ("startingOffsets", opts.starting_offsets),
        ("startingOffsetsByTimestamp", opts.starting_offsets_by_timestamp),
        ("startingTimestamp", opts.starting_timestamp),
    )
    _only_one(given, "starting")
    if opts.starting_timestamp is not None:
        return StartSpec("timestamp", timestamp=opts.starting_timestamp)
    if opts.starting_offsets_by_timestamp is not None:
        by_ts = _json_offsets(opts, "startingOffsetsByTimestamp", opts.starting_offsets_by_timestamp, 0)
        return StartSpec("timestamp", offsets=by_ts, unlisted=opts.starting_offsets_for_unlisted_queues)
    text = opts.starting_offsets
    if text is None:
        return StartSpec("latest" if streaming else "earliest")
    word = text.strip().lower()
    if word in ("earliest", "latest"):
        if word == "latest" and not streaming:
            raise OptionError("rocketmq source: option 'startingOffsets' = latest is not allowed for a batch query")
        return StartSpec(word)  # type: ignore[arg-type]
    offsets = _json_offsets(opts, "startingOffsets", text, EARLIEST)
    if not streaming and any(v == LATEST for v in offsets.values()):
        raise OptionError("rocketmq source: option 'startingOffsets' may not use -1 (latest) in a batch query")
    return StartSpec("offsets", offsets=offsets, unlisted=opts.starting_offsets_for_unlisted_queues)


def _end_spec(opts: SourceOptions, streaming: bool) -> EndSpec:
    given = _given(
        ("endingOffsets", opts.ending_offsets),
        ("endingOffsetsByTimestamp", opts.ending_offsets_by_timestamp),
        ("endingTimestamp", opts.ending_timestamp),
    )
    if given and streaming:
        raise OptionError(f"rocketmq source: option '{given[0]}' is for batch queries (spark.read) only")
    _only_one(given, "ending")
    if opts.ending_timestamp is not None:
        return EndSpec("timestamp", timestamp=opts.ending_timestamp)
    if opts.ending_offsets_by_timestamp is not None:
        by_ts = _json_offsets(opts, "endingOffsetsByTimestamp", opts.ending_offsets_by_timestamp, 0)
        return EndSpec("timestamp", offsets=by_ts)
    text = opts.ending_offsets
    if text is None:
        return EndSpec("latest")
    word = text.strip().lower()
    if word == "latest":
        return EndSpec("latest")
    if word == "earliest":
        raise OptionError("rocketmq source: option 'endingOffsets' = earliest is not allowed")
    offsets = _json_offsets(opts, "endingOffsets", text, LATEST)
    return EndSpec("offsets", offsets=offsets)


def _parse_assign(text: str) -> tuple[tuple[str, str | None, int], ...]:
    """``{topic: {broker: [ids]}}`` or ``{topic: [ids]}`` → sorted ``(topic, broker or None, queueId)`` triples."""
    bad = OptionError(
        'rocketmq source: option \'assign\' must be JSON {"topic": {"brokerName": [queueId, ...]}}'
        ' or {"topic": [queueId, ...]}'
    )
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise bad from None
    if not isinstance(data, dict) or not data:
        raise bad
    out: set[tuple[str, str | None, int]] = set()

    def ids(value: Any) -> list[int]:
        if not isinstance(value, list) or not value:
            raise bad
        if not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in value):
            raise bad
        return value

    for topic, spec in data.items():
        if not is_valid_name(topic):
            raise OptionError(f"rocketmq source: option 'assign': bad topic name {topic!r}")
        if isinstance(spec, dict):
            if not spec:
                raise bad
            for broker, qids in spec.items():
                out.update((topic, broker, q) for q in ids(qids))
        else:
            out.update((topic, None, q) for q in ids(spec))
    return tuple(sorted(out, key=lambda t: (t[0], t[1] or "", t[2])))


def parse_source_options(raw: Mapping[str, str], *, streaming: bool | None) -> SourceOptions:
    """Validate the reader options of ``spark.readStream`` (``streaming=True``) or ``spark.read`` (``False``).

    ``streaming=None`` (``DataSource.schema()``, which cannot tell the two apart) skips the checks that depend on it.
    """
    data = _canonical(raw, SOURCE_OPTIONS, "source", SINK_OPTIONS)
    if "namesrvAddr" not in data:
        raise OptionError("rocketmq source: option 'namesrvAddr' is required (e.g. 127.0.0.1:9876)")
    try:
        opts = SourceOptions.model_validate(data)
    except ValidationError as exc:
        raise _raise_validation(exc, "source") from None
    if sum((bool(opts.subscribe), opts.subscribe_pattern is not None, opts.assign is not None)) != 1:
        raise OptionError("rocketmq source: give exactly one of the options 'subscribe', 'subscribePattern', 'assign'")
    if opts.assign is not None:
        opts = opts.model_copy(update={"assigned": _parse_assign(opts.assign)})
    if streaming is False:
        for name in ("maxOffsetsPerTrigger", "minOffsetsPerTrigger", "maxTriggerDelay"):
            if name in data:
                raise OptionError(f"rocketmq source: option '{name}' is for streaming queries only")
    if opts.max_trigger_delay_ms is not None and opts.min_offsets_per_trigger is None:
        raise OptionError("rocketmq source: option 'maxTriggerDelay' has no effect without 'minOffsetsPerTrigger'")
    if (
        opts.min_offsets_per_trigger is not None
        and opts.max_offsets_per_trigger is not None
        and opts.min_offsets_per_trigger > opts.max_offsets_per_trigger
    ):
        raise OptionError(
            f"rocketmq source: option 'minOffsetsPerTrigger' ({opts.min_offsets_per_trigger}) is larger"
            f" than 'maxOffsetsPerTrigger' ({opts.max_offsets_per_trigger})"
        )
    start = _start_spec(opts, streaming is not False)
    end = _end_spec(opts, streaming is True)
    return opts.model_copy(update={"start": start, "end": end, "streaming": streaming is not False})


def parse_sink_options(raw: Mapping[str, str]) -> SinkOptions:
    """Validate the writer options of ``df.write`` / ``df.writeStream``."""
    data = _canonical(raw, SINK_OPTIONS, "sink", SOURCE_OPTIONS)
    if "namesrvAddr" not in data:
        raise OptionError("rocketmq sink: option 'namesrvAddr' is required (e.g. 127.0.0.1:9876)")
    try:
        return SinkOptions.model_validate(data)
    except ValidationError as exc:
        raise _raise_validation(exc, "sink") from None
