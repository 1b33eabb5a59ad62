"""The keyword options ``Producer(...)`` takes, as a ``TypedDict`` for ``**options: Unpack[ProducerOptions]``: a
misspelt or mistyped option is a type error under mypy/pyright, not only a runtime ``ValueError``. The keys are the
fields of ``ClientConfig`` and ``ProducerConfig`` (a unit test keeps them in step: a field added to either model
must be added here)."""

from __future__ import annotations

from typing import Literal, TypedDict


class ClientOptions(TypedDict, total=False):
    """``ClientConfig``'s fields."""

    instance_name: str | None
    client_ip: str | None
    serialize_type: Literal["JSON", "MSGPACK"]
    poll_namesrv_interval: float
    heartbeat_broker_interval: float
    request_timeout: float
    connect_timeout: float
    access_key: str | None
    secret_key: str | None
    security_token: str | None
    use_tls: bool
    tls_trust_cert_path: str | None
    tls_cert_path: str | None
    tls_key_path: str | None


class ProducerOptions(ClientOptions, total=False):
    """``ClientConfig``'s and ``ProducerConfig``'s fields (``namesrv_addr`` is the positional parameter)."""

    send_timeout_ms: int
    retry_times_when_send_failed: int
    retry_another_broker_when_not_store_ok: bool
    compress_msg_body_over_howmuch: int
    compress_level: int
    max_message_size: int
    default_topic_queue_nums: int
    send_latency_fault_enable: bool
    namespace: str
    enable_trace: bool
    trace_topic: str | None
