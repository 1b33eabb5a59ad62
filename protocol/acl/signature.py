"""The ACL 1.0 request signature, as J's ``AclClientRPCHook`` signs and ``PlainAccessValidator`` verifies it.
Pure: no IO. Shared by the servers (verify) and every client of ours (sign).

=================== ============================================================================================
step                rule
=================== ============================================================================================
content             the values of every ext field, sorted by key (Java ``TreeMap``: code-unit order, uppercase
                    before lowercase), leaving out ``Signature`` (and, on verification, optionally
                    ``_UNIQUE_KEY_QUERY``), concatenated, UTF-8; then the raw body bytes appended
signature           ``Base64(HmacSHA1(key=secretKey UTF-8, content))``, standard alphabet, with padding
fields added        ``AccessKey``, ``Signature``, and ``SecurityToken`` when a token is set (signed too)
=================== ============================================================================================
"""

from __future__ import annotations

import base64
import hmac
from binascii import b2a_base64
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import Final, Protocol, cast

from protocol.command import RemotingCommand

ACCESS_KEY: Final = "AccessKey"
SECRET_KEY: Final = "SecretKey"
SIGNATURE: Final = "Signature"
SECURITY_TOKEN: Final = "SecurityToken"
UNIQUE_KEY_QUERY: Final = "_UNIQUE_KEY_QUERY"


# Field order → a getter of the values to sign, sorted by key, without the dropped ones. Requests of one kind from
# one client arrive with their fields in the same order, so this is a handful of entries; cleared when a peer sends
# many shapes.
_ORDER: dict[tuple[tuple[str, ...], tuple[str, ...]], Callable[[dict[str, str]], tuple[str, ...]]] = {}
_ORDER_MAX = 1024


def _getter(order: tuple[str, ...]) -> Callable[[dict[str, str]], tuple[str, ...]]:
    if len(order) >= 2:
        return itemgetter(*order)  # C: one call for every value
    return lambda ext: tuple(ext[k] for k in order)


def _text(ext_fields: dict[str, str], drop: tuple[str, ...]) -> bytes:
    shape = (tuple(ext_fields), drop)
    values = _ORDER.get(shape)
    if values is None:
        if len(_ORDER) >= _ORDER_MAX:
            _ORDER.clear()
        values = _ORDER[shape] = _getter(tuple(k for k in sorted(ext_fields) if k not in drop))
    return "".join(values(ext_fields)).encode("utf-8")


def signature_content(ext_fields: dict[str, str], body: bytes, *, drop: tuple[str, ...] = (SIGNATURE,)) -> bytes:
    """The bytes J signs: sorted ext-field values without the ``drop`` keys, then the body."""
    data = _text(ext_fields, drop)
    return data + body if body else data


def calc_signature(content: bytes, secret_key: str) -> str:
    """``Base64(HmacSHA1(secretKey, content))`` (J ``AclUtils.calSignature``)."""
    return base64.b64encode(hmac.digest(secret_key.encode("utf-8"), content, "sha1")).decode("ascii")


class Mac(Protocol):
    """A keyed HMAC-SHA1 (``hmac.HMAC`` or the C object inside it): only ``copy`` is used on a shared one."""

    def copy(self) -> Mac: ...
    def update(self, data: bytes | memoryview, /) -> None: ...
    def digest(self) -> bytes: ...


@lru_cache(maxsize=256)
def keyed_mac(secret_key: str) -> Mac:
    """An HMAC-SHA1 keyed with ``secret_key``, to ``copy()`` per request (saves the key schedule); cached per key,
    never updated itself. The C object inside ``hmac.HMAC`` when there is one: its copy/update/digest skip a
    Python-level wrapper per call."""
    h = hmac.new(secret_key.encode("utf-8"), digestmod="sha1")
    inner = getattr(h, "_hmac", None)
    return cast(Mac, inner) if inner is not None and hasattr(inner, "copy") else h


def _digest(ext_fields: dict[str, str], body: bytes, secret: str | Mac, drop: tuple[str, ...] = (SIGNATURE,)) -> bytes:
    """The base64 signature as bytes, without copying the body."""
    h = (keyed_mac(secret) if isinstance(secret, str) else secret).copy()
    h.update(_text(ext_fields, drop))
    if body:
        h.update(body)
    return b2a_base64(h.digest(), newline=False)


def _sign(ext_fields: dict[str, str], body: bytes, secret: str | Mac, drop: tuple[str, ...] = (SIGNATURE,)) -> str:
    """``calc_signature(signature_content(...))`` without copying the body."""
    return _digest(ext_fields, body, secret, drop).decode("ascii")


def verify_signature(ext_fields: dict[str, str], body: bytes, secret_key: str | Mac) -> bool:
    """True when ``Signature`` matches; like J 4.9 the ``_UNIQUE_KEY_QUERY`` field is left out, and like J ≥ 5.1
    clients sign it, so either variant is accepted (docs/reference/acl.md §5). ``secret_key`` may be a ``keyed_mac``."""
    sent = ext_fields.get(SIGNATURE)
    if sent is None:
        return False
    sent_b = sent.encode("utf-8", "surrogatepass")  # bytes: compare_digest refuses non-ASCII text
    if UNIQUE_KEY_QUERY not in ext_fields:  # the hot path: one HMAC
        return hmac.compare_digest(_digest(ext_fields, body, secret_key), sent_b)
    for drop in ((SIGNATURE, UNIQUE_KEY_QUERY), (SIGNATURE,)):
        if hmac.compare_digest(_digest(ext_fields, body, secret_key, drop), sent_b):
            return True
    return False


@dataclass(frozen=True, slots=True)
class SessionCredentials:
    """What a client signs with (J ``SessionCredentials``)."""

    access_key: str
    secret_key: str
    security_token: str | None = None

    def sign(self, cmd: RemotingCommand) -> None:
        """Add ``AccessKey`` (+ ``SecurityToken``) and ``Signature`` to ``cmd`` in place (J ``doBeforeRequest``)."""
        ext = cmd.ext_fields
        ext.pop(SIGNATURE, None)
        ext[ACCESS_KEY] = self.access_key
        if self.security_token:
            ext[SECURITY_TOKEN] = self.security_token
        ext[SIGNATURE] = _sign(ext, cmd.body, self.secret_key)
