"""The keyword options ``PushConsumer(...)`` and ``PullConsumer(...)`` take, as ``TypedDict``s for
``**options: Unpack[PushConsumerOptions]`` / ``Unpack[PullConsumerOptions]`` (like ``ProducerOptions``): a misspelt or
mistyped option is a type error under mypy/pyright, not only a runtime ``ValueError``. The keys are the fields of
``ClientConfig`` and ``PushConsumerConfig`` / ``PullConsumerConfig`` (a unit test keeps them in step)."""

from __future__ import annotations

from typing import Literal

from client.consumer.allocate import Strategy
from client.producer.options import ClientOptions


class _ConsumerOptions(ClientOptions, total=False):
    """The fields every consumer has (``client.config._ConsumerConfig``)."""

    namespace: str
    enable_trace: bool
    trace_topic: str | None
    consume_from_where: Literal[
        "LAST_OFFSET",
        "FIRST_OFFSET",
        "TIMESTAMP",
        "CONSUME_FROM_LAST_OFFSET",
        "CONSUME_FROM_FIRST_OFFSET",
        "CONSUME_FROM_TIMESTAMP",
        "MIN_OFFSET",
        "MAX_OFFSET",
        "CONSUME_FROM_MIN_OFFSET",
        "CONSUME_FROM_MAX_OFFSET",
    ]
    consume_timestamp: int | None
    pull_batch_size: int
    pull_threshold_for_queue: int
    pull_threshold_size_for_queue: int
    suspend_timeout_ms: int
    pull_timeout_ms: int
    allocate_strategy: Strategy | None
    rebalance_interval: float


class PushConsumerOptions(_ConsumerOptions, total=False):
    """``ClientConfig``'s and ``PushConsumerConfig``'s fields (``namesrv_addr`` is the positional parameter)."""

    message_model: Literal["CLUSTERING", "BROADCASTING"]
    orderly: bool
    consume_message_batch_max_size: int
    consume_thread_max: int
    consume_concurrently_max_span: int
    max_reconsume_times: int
    consume_timeout: float
    suspend_current_queue_time_ms: int
    pull_interval_ms: int
    persist_consumer_offset_interval_ms: int
    offset_store_dir: str
    drain_timeout: float


class PullConsumerOptions(_ConsumerOptions, total=False):
    """``ClientConfig``'s and ``PullConsumerConfig``'s fields (``namesrv_addr`` is the positional parameter)."""

    auto_commit: bool
    auto_commit_interval: float
