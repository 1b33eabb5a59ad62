"""Option value types the ``mqadmin`` commands share: J's time formats and ``true``/``false`` flags."""

from __future__ import annotations

import argparse
import time


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
        raise argparse.ArgumentTypeError(f"{s!r}: expected millis or yyyy-MM-dd#HH:mm:ss:SSS") from None
    return int(time.mktime(t) * 1000) + (int(s[20:23]) if len(s) > 20 else 0)


def java_bool(text: str) -> bool:
    low = text.strip().lower()
    if low not in ("true", "false"):
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return low == "true"
