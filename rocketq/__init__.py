"""rocketq's public import name: the client SDK as ``rocketq``, the admin client as ``rocketq.admin``, the blocking
facades as ``rocketq.sync`` and the Spark data source as ``rocketq.spark``. They are the very objects of the
``client``, ``client.admin``, ``client.sync`` and ``spark_connector`` packages (``rocketq.Producer is
client.Producer``), found even when a project has its own ``client.py`` (``rocketq._packages``)::

    from rocketq import ConsumeResult, Message, Producer, PushConsumer

    async with Producer("group", namesrv_addr="127.0.0.1:9876") as p:
        await p.send(Message("Topic", b"body", tags="A"))
"""

from __future__ import annotations

from rocketq import _packages  # noqa: F401  (first: claims the top-level package names, see its docstring)

# isort: split
from client import (
    BrokerError,
    ClientConfig,
    ClientInstance,
    ConnectionClosedError,
    ConsumeResult,
    LocalTransactionState,
    Message,
    MessageQueue,
    MessageTooLargeError,
    MQClientError,
    NoBrokerAvailableError,
    Producer,
    ProducerConfig,
    PullConsumer,
    PullConsumerConfig,
    PullResult,
    PullStatus,
    PushConsumer,
    PushConsumerConfig,
    ReceivedMessage,
    RemotingError,
    RequestTimeoutError,
    RocketqError,
    RouteNotFoundError,
    SendResult,
    SendStatus,
    allocate_averagely,
    allocate_averagely_by_circle,
    allocate_consistent_hash,
    make_by_config,
    make_by_machine_room,
    make_consistent_hash,
)
from client.consumer.options import PullConsumerOptions, PushConsumerOptions
from client.producer.options import ProducerOptions

__all__ = [
    "BrokerError",
    "ClientConfig",
    "ClientInstance",
    "ConnectionClosedError",
    "ConsumeResult",
    "LocalTransactionState",
    "MQClientError",
    "Message",
    "MessageQueue",
    "MessageTooLargeError",
    "NoBrokerAvailableError",
    "Producer",
    "ProducerConfig",
    "ProducerOptions",
    "PullConsumer",
    "PullConsumerConfig",
    "PullConsumerOptions",
    "PullResult",
    "PullStatus",
    "PushConsumer",
    "PushConsumerConfig",
    "PushConsumerOptions",
    "ReceivedMessage",
    "RemotingError",
    "RequestTimeoutError",
    "RocketqError",
    "RouteNotFoundError",
    "SendResult",
    "SendStatus",
    "allocate_averagely",
    "allocate_averagely_by_circle",
    "allocate_consistent_hash",
    "make_by_config",
    "make_by_machine_room",
    "make_consistent_hash",
]
