"""TLS for the remoting protocol, with J's keys (docs/reference/acl.md §8): SSL contexts from PEM files, and the
first-byte sniff that lets one port serve plain and TLS peers.

================== ============================================================================================
tls.server.mode    ``disabled``: plain only (a TLS ClientHello is closed); ``permissive``: plain and TLS on the
                   same port; ``enforcing``: TLS only (a plain peer is closed)
first byte         ``0x16`` (TLS handshake record) → TLS; anything else → plain. A remoting frame starts with the
                   top byte of its int32 length, 0x00 for any frame under 16 MiB, so the two never collide
client auth        ``tls.server.need.client.auth`` none / optional / require (verified against
                   ``tls.server.trustCertPath``)
================== ============================================================================================
"""

from __future__ import annotations

import ssl
from typing import Final, Literal

TLS_HANDSHAKE: Final = 0x16
TlsMode = Literal["disabled", "permissive", "enforcing"]


class TlsConfigError(ValueError):
    """A TLS setting that cannot be used (missing or unreadable PEM files); one line for the operator."""


def server_context(
    cert_path: str,
    key_path: str,
    *,
    key_password: str = "",
    trust_cert_path: str = "",
    need_client_auth: str = "none",
) -> ssl.SSLContext:
    if not cert_path or not key_path:
        raise TlsConfigError(
            "tls.server.certPath and tls.server.keyPath are required when tls.server.mode is not disabled"
        )
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        ctx.load_cert_chain(cert_path, key_path, key_password or None)
        if trust_cert_path:
            ctx.load_verify_locations(trust_cert_path)
    except (OSError, ssl.SSLError) as exc:
        raise TlsConfigError(f"cannot load the server certificate/key: {exc}") from None
    ctx.verify_mode = {"require": ssl.CERT_REQUIRED, "optional": ssl.CERT_OPTIONAL}.get(need_client_auth, ssl.CERT_NONE)
    return ctx


def client_context(
    *, trust_cert_path: str = "", cert_path: str = "", key_path: str = "", key_password: str = ""
) -> ssl.SSLContext:
    """Without ``trust_cert_path`` the server is not verified (J ``tls.test.mode.enable`` / ``authServer=false``)."""
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    try:
        if trust_cert_path:
            ctx.load_verify_locations(trust_cert_path)
        else:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if cert_path and key_path:
            ctx.load_cert_chain(cert_path, key_path, key_password or None)
    except (OSError, ssl.SSLError) as exc:
        raise TlsConfigError(f"cannot load the client TLS files: {exc}") from None
    return ctx
