"""The wire and record formats of the RocketMQ 4.x remoting protocol (pure, no IO); ``protocol.remoting`` is the
asyncio shell around them."""

from __future__ import annotations

# first: chooses the compiled or the pure build (protocol.build) before any other module of ours is imported
import protocol.build  # noqa: F401
from protocol.codes import LanguageCode, RequestCode, ResponseCode, SerializeType
from protocol.command import RemotingCommand
from protocol.errors import (
    BrokerError,
    ConnectionClosedError,
    FrameTooLargeError,
    MalformedFrameError,
    ProtocolError,
    RemoteProtocolError,
    RemotingError,
    RequestTimeoutError,
    for_code,
)
from protocol.frame import MAX_FRAME, FrameDecoder, encode_frame

__all__ = [
    "MAX_FRAME",
    "BrokerError",
    "ConnectionClosedError",
    "FrameDecoder",
    "FrameTooLargeError",
    "LanguageCode",
    "MalformedFrameError",
    "ProtocolError",
    "RemoteProtocolError",
    "RemotingCommand",
    "RemotingError",
    "RequestCode",
    "RequestTimeoutError",
    "ResponseCode",
    "SerializeType",
    "encode_frame",
    "for_code",
]
