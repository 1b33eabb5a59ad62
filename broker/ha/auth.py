"""Slave authentication on the HA port (ours; RocketMQ's HA port has none and streams the commit log to anyone who
sends 8 bytes): the master challenges, the slave answers with an HMAC under a key both sides know, and only then does
the byte protocol of ``broker.ha.wire`` start.

==========  ======================================================  ===========================================
direction   bytes                                                   meaning
==========  ======================================================  ===========================================
master →    ``b"RQHA"`` | ``u8 version (1)`` | 32-byte nonce         the challenge, sent at accept
slave →     ``u16 len`` | key id (UTF-8, ``len`` bytes) |            key id ``""``: the shared ``haAuthSecret``;
master      32-byte HMAC-SHA256(secret, ``b"rocketq-ha-v1"`` |       otherwise an ACL access key (the slave's
            nonce | key id)                                         ``innerAccessKey``) whose account is admin
==========  ======================================================  ===========================================

A wrong key id, secret or a silence longer than the timeout closes the connection, with one WARNING line on the
master naming the peer and the reason. The nonce is fresh per connection, so a recorded answer is worth nothing on
the next one. Authentication is required by a master with ``haAuthSecret`` set or ACL on; a slave answers the
challenge when it has ``haAuthSecret`` or an ``innerAccessKey`` (both sides must be configured alike: a slave that
does not answer is closed after ``haHousekeepingInterval``).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import ssl
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from runtime.acl.rules import AclRules

MAGIC: Final = b"RQHA"
VERSION: Final = 1
NONCE_SIZE: Final = 32
MAC_SIZE: Final = 32
CHALLENGE_SIZE: Final = len(MAGIC) + 1 + NONCE_SIZE
_KEY_LEN: Final = struct.Struct(">H")
_LABEL: Final = b"rocketq-ha-v1"
MAX_KEY_ID: Final = 256

SecretOf = Callable[[str], "str | None"]
"""key id → the secret that key id must prove (None: unknown or not allowed)."""


class HAAuthError(Exception):
    """The peer did not authenticate; the text says why (logged, the connection closed)."""


def _mac(secret: str, nonce: bytes, key_id: str) -> bytes:
    return hmac.new(secret.encode(), _LABEL + nonce + key_id.encode(), hashlib.sha256).digest()


def answer(key_id: str, secret: str, challenge: bytes) -> bytes:
    """The slave's reply to one challenge; HAAuthError when the challenge is not ours."""
    if len(challenge) != CHALLENGE_SIZE or challenge[:4] != MAGIC or challenge[4] != VERSION:
        raise HAAuthError("the master's HA port sent no rocketq challenge (is haAuthSecret/ACL set on it?)")
    kid = key_id.encode()
    return _KEY_LEN.pack(len(kid)) + kid + _mac(secret, challenge[5:], key_id)


async def challenge_slave(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, secret_of: SecretOf, timeout_s: float
) -> str:
    """The master's side: send a challenge, check the answer; returns the key id that proved itself."""
    nonce = os.urandom(NONCE_SIZE)
    writer.write(MAGIC + bytes([VERSION]) + nonce)
    await writer.drain()
    try:
        async with asyncio.timeout(timeout_s):
            (n,) = _KEY_LEN.unpack(await reader.readexactly(_KEY_LEN.size))
            if n > MAX_KEY_ID:
                raise HAAuthError(f"key id of {n} bytes")
            kid = (await reader.readexactly(n)).decode("utf-8", "replace")
            mac = await reader.readexactly(MAC_SIZE)
    except TimeoutError:
        raise HAAuthError(f"no answer to the challenge within {timeout_s:.0f} s") from None
    except asyncio.IncompleteReadError:
        raise HAAuthError("closed before answering the challenge") from None
    secret = secret_of(kid)
    if secret is None:
        raise HAAuthError(f"key id {kid!r} may not replicate" if kid else "no shared haAuthSecret on this master")
    if not hmac.compare_digest(mac, _mac(secret, nonce, kid)):
        raise HAAuthError(f"wrong HMAC for key id {kid!r}")
    return kid


async def answer_master(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, key_id: str, secret: str, timeout_s: float
) -> None:
    """The slave's side: read the challenge and answer it."""
    try:
        async with asyncio.timeout(timeout_s):
            challenge = await reader.readexactly(CHALLENGE_SIZE)
    except TimeoutError:
        raise HAAuthError(f"no challenge from the master within {timeout_s:.0f} s") from None
    writer.write(answer(key_id, secret, challenge))
    await writer.drain()


@dataclass(frozen=True, slots=True)
class HASecurity:
    """What the HA port and the slave's dial use: ``secret_of`` (master; None = no authentication),
    ``credentials`` (slave: key id and secret; None = answer no challenge), TLS contexts (None = plain TCP)."""

    secret_of: SecretOf | None = None
    credentials: tuple[str, str] | None = None
    server_ssl: ssl.SSLContext | None = None
    client_ssl: ssl.SSLContext | None = None


def build_security(
    shared_secret: str,
    inner_key: tuple[str, str] | None,
    acl_rules: Callable[[], AclRules] | None,
    server_ssl: ssl.SSLContext | None,
    client_ssl: ssl.SSLContext | None,
) -> HASecurity:
    """The master authenticates slaves when ``shared_secret`` (``haAuthSecret``) is set or ACL is on
    (``acl_rules``: an admin account's access key and secret); a slave proves ``shared_secret`` when set, else its
    ``innerAccessKey``/``innerSecretKey``."""

    def secret_of(key_id: str) -> str | None:
        if not key_id:
            return shared_secret or None
        if acl_rules is None:
            return None
        account = acl_rules().account(key_id)
        return account.secret_key if account is not None and account.admin else None

    required = bool(shared_secret) or acl_rules is not None
    credentials = ("", shared_secret) if shared_secret else inner_key
    return HASecurity(secret_of if required else None, credentials, server_ssl, client_ssl)
