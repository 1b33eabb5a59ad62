"""Error classes of the wire protocol, and the one registry that maps a response code to an exception class.

One root, ``RocketqError``, and two families beneath it, as h11 and aiokafka draw them:

* ``ProtocolError`` — bytes that are not a valid frame. ``RemoteProtocolError`` is the peer's fault (the server
  closes that one connection); ``LocalProtocolError`` is ours (encoding something unencodable).
* ``RemotingError`` → ``BrokerError(code, remark)`` subclasses — a well-formed reply that reports a failure.
  Each class carries ``retriable`` (another attempt, maybe on another broker, may succeed) and ``refresh_route``
  (the client should re-fetch the topic route first). ``for_code()`` picks the class once for every caller.
"""

from __future__ import annotations

from typing import ClassVar

from protocol.codes import ResponseCode


class RocketqError(Exception):
    """The one root of every error this project raises to a caller: the SDK's ``MQClientError`` family, the
    remoting errors (``RemotingError`` → connection, timeout, broker replies) and the protocol errors. ``except
    RocketqError`` catches whatever a send, pull or admin call can fail with."""


class ProtocolError(RocketqError):
    """Base for framing and header-decoding failures."""


class RemoteProtocolError(ProtocolError):
    """The peer sent bytes that violate the protocol; the connection must be closed."""


class LocalProtocolError(ProtocolError):
    """We were asked to encode something the protocol cannot carry."""


class FrameTooLargeError(RemoteProtocolError):
    """A frame declares a length above the configured maximum (16 MiB by default)."""

    def __init__(self, length: int, limit: int) -> None:
        super().__init__(f"frame length {length} exceeds the limit of {limit} bytes")
        self.length = length
        self.limit = limit


class MalformedFrameError(RemoteProtocolError):
    """A frame whose header length, serialize type or header bytes cannot be decoded."""


class RemotingError(RocketqError):
    """Base of errors raised by request/response exchanges (transport or remote failure)."""

    retriable: ClassVar[bool] = False
    refresh_route: ClassVar[bool] = False


class ConnectionClosedError(RemotingError):
    """The connection dropped before a reply arrived."""

    retriable = True


class RequestTimeoutError(RemotingError):
    """No reply within the caller's timeout."""

    retriable = True


class BrokerError(RemotingError):
    """A reply with a non-success response code. ``code`` is the ResponseCode, ``remark`` the server text."""

    code: ClassVar[int] = -1

    def __init__(self, code: int, remark: str | None = None, addr: str | None = None) -> None:
        self.response_code = code
        self.remark = remark or ""
        self.addr = addr
        where = f" from {addr}" if addr else ""
        super().__init__(f"CODE: {code} DESC: {self.remark}{where}")


class SystemError_(BrokerError):
    code = ResponseCode.SYSTEM_ERROR
    retriable = True


class SystemBusyError(BrokerError):
    code = ResponseCode.SYSTEM_BUSY
    retriable = True


class RequestCodeNotSupportedError(BrokerError):
    code = ResponseCode.REQUEST_CODE_NOT_SUPPORTED


class FlushDiskTimeoutError(BrokerError):
    code = ResponseCode.FLUSH_DISK_TIMEOUT


class SlaveNotAvailableError(BrokerError):
    code = ResponseCode.SLAVE_NOT_AVAILABLE


class FlushSlaveTimeoutError(BrokerError):
    code = ResponseCode.FLUSH_SLAVE_TIMEOUT


class MessageIllegalError(BrokerError):
    code = ResponseCode.MESSAGE_ILLEGAL


class ServiceNotAvailableError(BrokerError):
    code = ResponseCode.SERVICE_NOT_AVAILABLE
    retriable = True
    refresh_route = True


class VersionNotSupportedError(BrokerError):
    code = ResponseCode.VERSION_NOT_SUPPORTED


class NoPermissionError(BrokerError):
    code = ResponseCode.NO_PERMISSION
    refresh_route = True


class TopicNotExistError(BrokerError):
    code = ResponseCode.TOPIC_NOT_EXIST
    retriable = True
    refresh_route = True


class TopicExistAlreadyError(BrokerError):
    code = ResponseCode.TOPIC_EXIST_ALREADY


class PullNotFoundError(BrokerError):
    code = ResponseCode.PULL_NOT_FOUND


class PullRetryImmediatelyError(BrokerError):
    code = ResponseCode.PULL_RETRY_IMMEDIATELY
    retriable = True


class PullOffsetMovedError(BrokerError):
    code = ResponseCode.PULL_OFFSET_MOVED


class QueryNotFoundError(BrokerError):
    code = ResponseCode.QUERY_NOT_FOUND


class SubscriptionParseFailedError(BrokerError):
    code = ResponseCode.SUBSCRIPTION_PARSE_FAILED


class SubscriptionNotExistError(BrokerError):
    code = ResponseCode.SUBSCRIPTION_NOT_EXIST
    retriable = True


class SubscriptionNotLatestError(BrokerError):
    code = ResponseCode.SUBSCRIPTION_NOT_LATEST
    retriable = True


class SubscriptionGroupNotExistError(BrokerError):
    code = ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST


class TransactionFailedError(BrokerError):
    code = ResponseCode.TRANSACTION_FAILED


class ConsumerNotOnlineError(BrokerError):
    code = ResponseCode.CONSUMER_NOT_ONLINE


class ConsumeMsgTimeoutError(BrokerError):
    code = ResponseCode.CONSUME_MSG_TIMEOUT


class NoMessageError(BrokerError):
    code = ResponseCode.NO_MESSAGE


class FlowControlError(BrokerError):
    code = ResponseCode.FLOW_CONTROL
    retriable = True


def _iter_subclasses(cls: type[BrokerError]) -> list[type[BrokerError]]:
    out: list[type[BrokerError]] = []
    for sub in cls.__subclasses__():
        out.append(sub)
        out.extend(_iter_subclasses(sub))
    return out


_BY_CODE: dict[int, type[BrokerError]] = {c.code: c for c in _iter_subclasses(BrokerError) if c.code >= 0}


def for_code(code: int) -> type[BrokerError]:
    """The exception class for a response code; unknown codes map to plain ``BrokerError``."""
    return _BY_CODE.get(code, BrokerError)


def error_for(code: int, remark: str | None = None, addr: str | None = None) -> BrokerError:
    """Build the exception a caller should raise for a failed reply."""
    return for_code(code)(code, remark, addr)
