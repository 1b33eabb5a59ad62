"""rocketq's client SDK: asyncio-native producers and consumers for RocketMQ 4.x brokers (ours or Apache's).

    async with Producer("group", namesrv_addr="127.0.0.1:9876") as p:
        result = await p.send(Message("Topic", b"body", tags="A", keys=["k1"]))

    async def listener(msgs: list[ReceivedMessage]) -> ConsumeResult:
        ...
        return ConsumeResult.SUCCESS

    consumer = PushConsumer("group", namesrv_addr="127.0.0.1:9876")
    consumer.subscribe("Topic", "A || B", listener)
    async with consumer:
        ...

``Producer.request`` sends a request and awaits its reply (``client.reply.create_reply_message`` builds the answer
on the consumer's side). ``PullConsumer`` polls, seeks and commits itself; ``client.sync`` offers the same three for code that is not async.
Options of each client are the fields of ``client.config`` (``ClientConfig`` plus ``ProducerConfig``,
``PushConsumerConfig`` or ``PullConsumerConfig``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from protocol import lazy_names

if TYPE_CHECKING:  # what mypy and readers see; at run time each name is imported from its module on first use
    from client.config import ClientConfig, ProducerConfig, PullConsumerConfig, PushConsumerConfig
    from client.consumer.allocate import (
        allocate_averagely,
        allocate_averagely_by_circle,
        allocate_consistent_hash,
        make_by_config,
        make_by_machine_room,
        make_consistent_hash,
    )
    from client.consumer.pull import PullConsumer
    from client.consumer.push import PushConsumer
    from client.consumer.selector import MessageSelector
    from client.errors import (
        BrokerError,
        ConnectionClosedError,
        MessageTooLargeError,
        MQClientError,
        NoBrokerAvailableError,
        RemotingError,
        ReplyTimeoutError,
        RequestTimeoutError,
        RocketqError,
        RouteNotFoundError,
    )
    from client.instance import ClientInstance
    from client.message import Message, MessageQueue, ReceivedMessage
    from client.producer.producer import Producer
    from client.results import ConsumeResult, LocalTransactionState, PullResult, PullStatus, SendResult, SendStatus

# the module of each public name (loaded on first use: a process that only pulls does not load the push consumer)
__getattr__, __dir__ = lazy_names.exports(
    __name__,
    {
        "client.config": "ClientConfig ProducerConfig PullConsumerConfig PushConsumerConfig",
        "client.consumer.allocate": (
            "allocate_averagely allocate_averagely_by_circle allocate_consistent_hash make_by_config "
            "make_by_machine_room make_consistent_hash"
        ),
        "client.consumer.pull": "PullConsumer",
        "client.consumer.push": "PushConsumer",
        "client.consumer.selector": "MessageSelector",
        "client.errors": (
            "BrokerError ConnectionClosedError MessageTooLargeError MQClientError NoBrokerAvailableError "
            "RemotingError ReplyTimeoutError RequestTimeoutError RocketqError RouteNotFoundError"
        ),
        "client.instance": "ClientInstance",
        "client.message": "Message MessageQueue ReceivedMessage",
        "client.producer.producer": "Producer",
        "client.results": "ConsumeResult LocalTransactionState PullResult PullStatus SendResult SendStatus",
    },
)

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
    "MessageSelector",
    "MessageTooLargeError",
    "NoBrokerAvailableError",
    "Producer",
    "ProducerConfig",
    "PullConsumer",
    "PullConsumerConfig",
    "PullResult",
    "PullStatus",
    "PushConsumer",
    "PushConsumerConfig",
    "ReceivedMessage",
    "RemotingError",
    "ReplyTimeoutError",
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
