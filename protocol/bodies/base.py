"""Shared vocabulary of the JSON bodies: the pydantic base ``JsonBody`` (frozen, unknown keys ignored, written by
wire name) and the consumer enums; the permission bits are ``protocol.rules``'s.

| name             | wire                                                                                      |
|------------------|-------------------------------------------------------------------------------------------|
| ConsumeType      | CONSUME_ACTIVELY (0) / CONSUME_PASSIVELY (1); C++ sends the ordinal                       |
| MessageModel     | BROADCASTING (0) / CLUSTERING (1)                                                         |
| ConsumeFromWhere | CONSUME_FROM_LAST_OFFSET (0) … CONSUME_FROM_TIMESTAMP (5), J's ordinals                   |
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    ValidationError,
)

from protocol.bodies.lenient import BodyBytes, BodyDecodeError, dumps, loads_lenient

# -- enums -------------------------------------------------------------------------------------------------------


class ConsumeType(StrEnum):
    """Wire names; the member order is J's ordinal order (C++ sends ordinals)."""

    CONSUME_ACTIVELY = "CONSUME_ACTIVELY"  # 0: pull
    CONSUME_PASSIVELY = "CONSUME_PASSIVELY"  # 1: push


class MessageModel(StrEnum):
    BROADCASTING = "BROADCASTING"  # 0
    CLUSTERING = "CLUSTERING"  # 1


class ConsumeFromWhere(StrEnum):
    CONSUME_FROM_LAST_OFFSET = "CONSUME_FROM_LAST_OFFSET"  # 0
    CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST = "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST"
    CONSUME_FROM_MIN_OFFSET = "CONSUME_FROM_MIN_OFFSET"  # 2
    CONSUME_FROM_MAX_OFFSET = "CONSUME_FROM_MAX_OFFSET"  # 3
    CONSUME_FROM_FIRST_OFFSET = "CONSUME_FROM_FIRST_OFFSET"  # 4
    CONSUME_FROM_TIMESTAMP = "CONSUME_FROM_TIMESTAMP"  # 5


CONSUME_TYPES: Final = tuple(e.value for e in ConsumeType)
MESSAGE_MODELS: Final = tuple(e.value for e in MessageModel)
CONSUME_FROM_WHERE: Final = tuple(e.value for e in ConsumeFromWhere)

# -- pydantic base ---------------------------------------------------------------------------------------------------


def _summary(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False)[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "body"
        parts.append(f"{where}: {err['msg']}")
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


class JsonBody(BaseModel):
    """Base of the pydantic bodies: frozen, unknown keys ignored, constructed by attribute name, written by wire
    name."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)

    @classmethod
    def from_json(cls, obj: Any) -> Self:
        try:
            return cls.model_validate(obj)
        except ValidationError as exc:
            raise BodyDecodeError(f"{cls.__name__}: {_summary(exc)}") from None

    @classmethod
    def decode(cls, body: BodyBytes) -> Self:
        if not body:
            raise BodyDecodeError(f"{cls.__name__}: empty body")
        return cls.from_json(loads_lenient(body))

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    def encode(self) -> bytes:
        return dumps(self.to_json())


def _none_is_empty_list(v: Any) -> Any:
    return [] if v is None else v


def _none_is_empty_dict(v: Any) -> Any:
    return {} if v is None else v
