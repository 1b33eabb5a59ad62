"""The ``authorization`` header of RocketMQ 5 gRPC requests (proxy/ACL 1.0 ``AuthorizationHeader``): parsing and
signature verification, pure.

Header (Python 5.x client: lowercase hex; Node: uppercase; both sign ``x-mq-date-time``)::

    MQv2-HMAC-SHA1 Credential=<accessKey>[/…], SignedHeaders=x-mq-date-time, Signature=<hex HMAC-SHA1>

================ =====================================================================================
part             rule
================ =====================================================================================
method           up to the first space; only ``MQv2-HMAC-SHA1`` is accepted
Credential       the access key is the text before the first ``/``
Signature        hex of HMAC-SHA1(key = secretKey UTF-8, data = the ``x-mq-date-time`` value UTF-8),
                 compared case-insensitively and in constant time
================ =====================================================================================

Replay protection (beyond RocketMQ's ACL 1.0, which has no clock check): ``check_fresh`` refuses an ``x-mq-date-time``
older than ``MAX_AGE_S`` (15 min) or more than ``MAX_AHEAD_S`` (60 s of clock skew) in the future, so a captured
header can be replayed for at most 15 minutes. The value is UTC ``yyyyMMdd'T'HHmmss'Z'`` (the Python 5.x client
formats its *local* time with a ``Z``: on a host not on UTC its requests are off by the UTC offset and refused).
``verify`` takes a lookup from access key to secret key, so the broker's
ACL account store (when ACL is on) plugs in without this module knowing it.
"""

from __future__ import annotations

import calendar
import hashlib
import hmac
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

METHOD = "MQv2-HMAC-SHA1"
MAX_AGE_S: Final = 15 * 60
MAX_AHEAD_S: Final = 60
DATE_FORMAT: Final = "%Y%m%dT%H%M%SZ"


class AuthError(ValueError):
    """The request is not authenticated; the text says why (the client gets UNAUTHORIZED 40100)."""


@dataclass(frozen=True, slots=True)
class AuthorizationHeader:
    method: str
    access_key: str
    signed_headers: str
    signature: str


def parse(header: str) -> AuthorizationHeader:
    method, sep, rest = header.strip().partition(" ")
    if not sep:
        raise AuthError("authorization header has no credentials")
    fields: dict[str, str] = {}
    for part in rest.split(","):
        key, eq, value = part.strip().partition("=")
        if eq:
            fields[key.strip()] = value.strip()
    credential = fields.get("Credential", "")
    signature = fields.get("Signature", "")
    if not credential or not signature:
        raise AuthError("authorization header needs Credential and Signature")
    return AuthorizationHeader(method, credential.split("/", 1)[0], fields.get("SignedHeaders", ""), signature)


def sign(secret_key: str, date_time: str) -> str:
    return hmac.new(secret_key.encode(), date_time.encode(), hashlib.sha1).hexdigest()


def check_fresh(date_time: str, now_s: float | None = None) -> None:
    """AuthError unless ``date_time`` (UTC ``yyyyMMdd'T'HHmmss'Z'``) lies in [now − 15 min, now + 60 s]."""
    try:
        signed_at = calendar.timegm(time.strptime(date_time.strip(), DATE_FORMAT))
    except ValueError:
        raise AuthError(f"x-mq-date-time {date_time!r} is not yyyyMMddTHHmmssZ") from None
    now = time.time() if now_s is None else now_s
    if signed_at < now - MAX_AGE_S:
        raise AuthError(f"x-mq-date-time {date_time} is older than {MAX_AGE_S // 60} minutes: request refused (replay)")
    if signed_at > now + MAX_AHEAD_S:
        raise AuthError(f"x-mq-date-time {date_time} is in the future: request refused")


def verify(header: str | None, date_time: str | None, secret_of: Callable[[str], str | None]) -> str:
    """The authenticated access key, or AuthError."""
    if not header:
        raise AuthError("authorization header is required")
    auth = parse(header)
    if auth.method != METHOD:
        raise AuthError(f"unsupported authorization method {auth.method}")
    if not date_time:
        raise AuthError("x-mq-date-time header is required")
    secret = secret_of(auth.access_key)
    if secret is None:
        raise AuthError(f"no account for access key {auth.access_key}")
    if not hmac.compare_digest(sign(secret, date_time), auth.signature.lower()):
        raise AuthError("signature mismatch")
    check_fresh(date_time)
    return auth.access_key
