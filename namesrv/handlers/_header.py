"""Reading a request's typed header (``protocol.headers``) in a name-server handler: a missing or malformed field
answers SYSTEM_ERROR with the header's own text (J's "the custom field <x> is null")."""

from __future__ import annotations

from typing import Protocol, TypeVar

from protocol.codes import ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import MalformedHeaderError
from protocol.remoting import HandlerError

H = TypeVar("H", covariant=True)


class _HeaderClass(Protocol[H]):
    def from_ext_fields(self, fields: dict[str, str], /) -> H: ...


def read_header(cls: _HeaderClass[H], cmd: RemotingCommand) -> H:
    try:
        return cls.from_ext_fields(cmd.ext_fields)
    except MalformedHeaderError as exc:
        raise HandlerError(ResponseCode.SYSTEM_ERROR, str(exc)) from None
