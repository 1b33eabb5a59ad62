"""Helpers the broker handler modules share: typed-header decoding with RocketMQ's error reply, and the checks
every send path (plain, batch, transactional half) makes before it stores anything.

J decodes a custom header reflectively and answers SYSTEM_ERROR with the exception text when a required field is
missing ("the custom field <x> is null") or a number does not parse; ``decode_header`` does the same through the
explicit ``from_ext_fields`` of ``protocol.headers``.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from broker import topics as T
from protocol.codes import ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting.handler import HandlerError

H = TypeVar("H", covariant=True)


class _HeaderClass(Protocol[H]):
    def from_ext_fields(self, fields: dict[str, str], /) -> H: ...


def decode_header(cls: _HeaderClass[H], cmd: RemotingCommand) -> H:
    """``cls.from_ext_fields(cmd.ext_fields)``; a missing or malformed field → SYSTEM_ERROR with its message."""
    try:
        return cls.from_ext_fields(cmd.ext_fields)
    except (ValueError, TypeError, KeyError) as exc:
        raise HandlerError(ResponseCode.SYSTEM_ERROR, str(exc) or type(exc).__name__) from None


def check_send_allowed(topic: str, *, writeable: bool, broker_ip: str) -> None:
    """J's send-path refusals, in its order: a broker without write permission (NO_PERMISSION), a bad topic name
    (SYSTEM_ERROR), a topic producers may not send to (NO_PERMISSION)."""
    if not writeable:
        raise HandlerError(ResponseCode.NO_PERMISSION, f"the broker[{broker_ip}] sending message is forbidden")
    bad = T.topic_error(topic)
    if bad is not None:
        raise HandlerError(ResponseCode.SYSTEM_ERROR, bad)
    forbidden = T.send_forbidden_remark(topic)
    if forbidden is not None:
        raise HandlerError(ResponseCode.NO_PERMISSION, forbidden)
