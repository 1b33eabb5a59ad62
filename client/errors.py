"""Client-side errors, on top of ``protocol.errors``: everything the SDK raises derives from ``RocketqError`` —
``MQClientError`` (client-side failures) and ``RemotingError`` (connection lost or refused, timeout, and the
broker's failure replies, ``BrokerError`` subclasses with ``retriable``/``refresh_route``)."""

from __future__ import annotations

from protocol.errors import BrokerError, ConnectionClosedError, RemotingError, RequestTimeoutError, RocketqError


class MQClientError(RocketqError):
    """A client-side failure; ``remark`` says why in RocketMQ's words where there are some."""

    def __init__(self, message: str, remark: str | None = None) -> None:
        super().__init__(message)
        self.remark = remark or message


class RouteNotFoundError(MQClientError):
    """No name server knows the topic (and it cannot be auto-created)."""


class NoBrokerAvailableError(MQClientError):
    """The route names no broker we can use for this operation."""


class MessageTooLargeError(MQClientError):
    """The body is larger than the producer's ``max_message_size``."""


class ReplyTimeoutError(MQClientError):
    """``Producer.request``: the request was sent but no reply came within the timeout (J
    ``RequestTimeoutException``, code 10006)."""

    code = 10006


__all__ = [
    "BrokerError",
    "ConnectionClosedError",
    "MQClientError",
    "MessageTooLargeError",
    "NoBrokerAvailableError",
    "RemotingError",
    "ReplyTimeoutError",
    "RequestTimeoutError",
    "RocketqError",
    "RouteNotFoundError",
]
