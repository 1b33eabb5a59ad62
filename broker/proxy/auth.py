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

There is no clock-skew check (as ACL 1.0). ``verify`` takes a lookup from access key to secret key, so the broker's
ACL account store (when ACL is on) plugs in without this module knowing it.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass

METHOD = "MQv2-HMAC-SHA1"


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
    return auth.access_key
