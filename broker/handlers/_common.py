"""Helpers the broker handler modules share: typed-header decoding with RocketMQ's error reply, the checks every
send path (plain, batch, transactional half) makes before it stores anything, and the admin → broker → consumer
relay.

J decodes a custom header reflectively and answers SYSTEM_ERROR with the exception text when a required field is
missing ("the custom field <x> is null") or a number does not parse; ``decode_header`` does the same through the
explicit ``from_ext_fields`` of ``protocol.headers`` (``bad_header``).

``call_consumer`` is J ``AdminBrokerProcessor.callConsumer`` (GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY):
the request goes to the connection the client heartbeated on, and the client's reply code, remark, ext fields and
body come back unchanged (the body as bytes: C++ writes non-standard JSON there).
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from broker.services.access import send_refusal
from broker.services.client_registry import ClientRegistry
from protocol.codes import ResponseCode
from protocol.command import RemotingCommand
from protocol.errors import RemotingError, RequestTimeoutError
from protocol.remoting.handler import HandlerError

CALL_CLIENT_TIMEOUT_S = 10.0

H = TypeVar("H", covariant=True)


class _HeaderClass(Protocol[H]):
    def from_ext_fields(self, fields: dict[str, str], /) -> H: ...


# what a header's from_ext_fields raises for a missing or malformed field
HEADER_ERRORS = (ValueError, TypeError, KeyError)


def bad_header(exc: Exception) -> HandlerError:
    """The reply to a header that does not decode (``HEADER_ERRORS``): SYSTEM_ERROR with the decoder's message."""
    return HandlerError(ResponseCode.SYSTEM_ERROR, str(exc) or type(exc).__name__)


def decode_header(cls: _HeaderClass[H], cmd: RemotingCommand) -> H:
    """``cls.from_ext_fields(cmd.ext_fields)``; a missing or malformed field → ``bad_header``. (The send and pull
    handlers decode inline, ``except HEADER_ERRORS``: their header class is named where it is decoded.)"""
    try:
        return cls.from_ext_fields(cmd.ext_fields)
    except HEADER_ERRORS as exc:
        raise bad_header(exc) from None


def check_send_allowed(topic: str, *, writeable: bool, broker_ip: str) -> None:
    """J's send-path refusals, in its order: a broker without write permission (NO_PERMISSION), a bad topic name
    (SYSTEM_ERROR), a topic producers may not send to (NO_PERMISSION)."""
    refusal = send_refusal(topic, writeable=writeable, broker_ip=broker_ip)
    if refusal is not None:
        raise HandlerError(*refusal)


async def call_consumer(
    clients: ClientRegistry,
    cmd: RemotingCommand,
    group: str,
    client_id: str,
    *,
    ext_fields: dict[str, str] | None = None,
    body: bytes | None = None,
    timeout_s: float = CALL_CLIENT_TIMEOUT_S,
) -> RemotingCommand:
    """Forward ``cmd``'s code with ``ext_fields`` and ``body`` (default: ``cmd``'s own) to ``client_id`` of
    ``group`` and build the reply to ``cmd`` from the client's. A client that is not connected →
    CONSUMER_NOT_ONLINE "The Consumer <g> <cid> not online"; no reply within ``timeout_s`` → CONSUME_MSG_TIMEOUT
    "consumer <g> <cid> Timeout: …"; a connection lost meanwhile → SYSTEM_ERROR "invoke consumer <g> <cid>
    Exception: …" (J's remarks)."""
    info = clients.find_consumer_channel(group, client_id)
    if info is None:
        raise HandlerError(ResponseCode.CONSUMER_NOT_ONLINE, f"The Consumer <{group}> <{client_id}> not online")
    req = RemotingCommand.request(
        cmd.code,
        dict(cmd.ext_fields if ext_fields is None else ext_fields),
        cmd.body if body is None else body,
    )
    try:
        resp = await info.channel.invoke(req, timeout_s)
    except RequestTimeoutError as exc:
        raise HandlerError(
            ResponseCode.CONSUME_MSG_TIMEOUT, f"consumer <{group}> <{client_id}> Timeout: {exc}"
        ) from None
    except RemotingError as exc:
        raise HandlerError(
            ResponseCode.SYSTEM_ERROR, f"invoke consumer <{group}> <{client_id}> Exception: {exc}"
        ) from None
    return cmd.make_response(resp.code, resp.remark, dict(resp.ext_fields), resp.body)
