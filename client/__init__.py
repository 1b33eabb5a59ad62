"""rocketq's client SDK: asyncio-native producers and consumers for RocketMQ 4.x brokers (ours or Apache's).

    async with Producer("group", namesrv_addr="127.0.0.1:9876") as p:
        result = await p.send(Message("Topic", b"body", tags="A", keys=["k1"]))

``client.sync`` offers the same producer and consumers for code that is not async.
"""

from __future__ import annotations

from client.consumer.allocate import (
    allocate_averagely,
    allocate_averagely_by_circle,
    allocate_consistent_hash,
    make_by_config,
    make_by_machine_room,
)
from client.consumer.pull import PullConsumer
from client.consumer.push import PushConsumer
from client.errors import BrokerError, MessageTooLargeError, MQClientError, RouteNotFoundError
from client.instance import ClientInstance
from client.message import Message, MessageQueue, ReceivedMessage
from client.producer.producer import Producer
from client.results import ConsumeResult, LocalTransactionState, PullResult, PullStatus, SendResult, SendStatus

__all__ = [
    "BrokerError",
    "ClientInstance",
    "ConsumeResult",
    "LocalTransactionState",
    "MQClientError",
    "Message",
    "MessageQueue",
    "MessageTooLargeError",
    "Producer",
    "PullConsumer",
    "PullResult",
    "PullStatus",
    "PushConsumer",
    "ReceivedMessage",
    "RouteNotFoundError",
    "SendResult",
    "SendStatus",
    "allocate_averagely",
    "allocate_averagely_by_circle",
    "allocate_consistent_hash",
    "make_by_config",
    "make_by_machine_room",
]
