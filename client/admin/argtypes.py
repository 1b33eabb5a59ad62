"""Option value types the ``mqadmin`` commands share: J's time formats and ``true``/``false`` flags."""

from __future__ import annotations

import argparse
import time


class BadOptionValue(argparse.ArgumentTypeError, ValueError):
    """An option value of the wrong form: argparse prints it as a usage error (exit 2) when it checks the option,
    ``mqadmin`` as its one-line error (exit 1) when a command parses the value itself."""


def parse_time(s: str) -> int:
    """``now`` | epoch millis | ``yyyy-MM-dd#HH:mm:ss:SSS`` → epoch millis (J's tool formats)."""
    s = s.strip()
    if s == "now":
        return int(time.time() * 1000)
    if s.lstrip("-").isdigit():
        return int(s)
    try:
        t = time.strptime(s[:19], "%Y-%m-%d#%H:%M:%S")
    except ValueError:
        raise BadOptionValue(f"{s!r}: expected now, millis or yyyy-MM-dd#HH:mm:ss:SSS") from None
    millis = s[20:23]
    if millis and not millis.isdigit():
        raise BadOptionValue(f"{s!r}: expected now, millis or yyyy-MM-dd#HH:mm:ss:SSS")
    return int(time.mktime(t) * 1000) + (int(millis) if millis else 0)


def java_bool(text: str) -> bool:
    low = text.strip().lower()
    if low not in ("true", "false"):
        raise BadOptionValue(f"expected true or false, got {text!r}")
    return low == "true"
