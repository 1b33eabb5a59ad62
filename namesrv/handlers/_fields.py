"""Reading request header fields the way J's ``decodeCommandCustomHeader`` does: required fields raise
"the custom field <x> is null" (SYSTEM_ERROR), numbers must parse, booleans follow ``Boolean.parseBoolean``."""

from __future__ import annotations

from protocol.codes import ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting import HandlerError, MissingFieldError


def require(cmd: RemotingCommand, *names: str) -> list[str]:
    """The values of required fields, checked in order (so the first missing one is the one reported)."""
    out = []
    for name in names:
        value = cmd.ext_fields.get(name)
        if value is None:
            raise MissingFieldError(name)
        out.append(value)
    return out


def to_int(name: str, value: str) -> int:
    try:
        return int(value.strip())
    except ValueError:
        raise HandlerError(ResponseCode.SYSTEM_ERROR, f"the custom field <{name}> is not a number: {value!r}") from None


def optional_int(cmd: RemotingCommand, name: str, default: int) -> int:
    value = cmd.ext_fields.get(name)
    return default if value is None or value == "" else to_int(name, value)


def optional_bool(cmd: RemotingCommand, name: str) -> bool:
    return cmd.ext_fields.get(name, "").strip().lower() == "true"


def optional_str(cmd: RemotingCommand, name: str) -> str | None:
    value = cmd.ext_fields.get(name)
    return value if value else None
