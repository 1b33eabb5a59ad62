"""Importing the Raft log keeps ``socket.inet_ntop`` working: PySyncObj 0.3.17 replaces it with a Windows-only shim on
every OS, which broke every IPv6 host decode (the SDK's bulk decoder, the Spark reader) in a process that had
imported the controller."""

from __future__ import annotations

import socket

import pysyncobj  # noqa: F401  # first, as a test module or a user may import it: the shim is installed here

import controller.raft_log  # noqa: F401


def test_inet_ntop_still_decodes_ipv6_after_pysyncobj() -> None:
    assert socket.inet_ntop(socket.AF_INET6, b"\x00" * 15 + b"\x01") == "::1"
    assert socket.inet_ntop(socket.AF_INET, b"\x7f\x00\x00\x01") == "127.0.0.1"
