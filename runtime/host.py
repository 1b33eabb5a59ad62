"""This host's address and host-name lookup: the only name resolution the record codec's users need, kept out
of the pure codec (``protocol.record`` packs IP addresses only).
"""

from __future__ import annotations

import ipaddress
import socket

LOOPBACK = "127.0.0.1"


def local_ip() -> str:
    """The IPv4 address this host reaches the outside world from (a UDP ``connect`` sends no packet), 127.0.0.1
    when there is no route."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            return str(s.getsockname()[0])
    except OSError:
        return LOOPBACK


def resolve_ip(host: str) -> str:
    """``host`` when it is an IP address, else the IPv4 address it resolves to (127.0.0.1 when it does not)."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        try:
            return socket.gethostbyname(host)
        except OSError:
            return LOOPBACK
    return host
