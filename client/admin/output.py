"""How the newer ``mqadmin`` commands print: a ``--json`` switch every read command takes, fixed-width tables whose
header cells start with ``#`` (J's shape, for scripts that ``awk`` them) or the same rows as JSON objects keyed by
the header names without ``#``, and J's text forms of the values (``true``/``false``, ``null``, human times)."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any


def json_arg(p: argparse.ArgumentParser) -> None:
    """``--json``: machine-readable output instead of J's text (the same fields)."""
    p.add_argument("--json", action="store_true", help="print JSON instead of the text table")


def print_json(obj: Any) -> None:
    print(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def java(value: object) -> str:
    """A value as J's ``String.valueOf`` prints it (``true``/``false``, ``null``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def java_map(m: Mapping[str, object]) -> str:
    """A map as J's ``AbstractMap.toString``: ``{k1=v1, k2=v2}``."""
    return "{" + ", ".join(f"{k}={java(v)}" for k, v in m.items()) + "}"


def human_ms(ms: int) -> str:
    """J ``UtilAll.timeMillisToHumanString2``: ``yyyy-MM-dd HH:mm:ss,SSS`` local time."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000)) + f",{ms % 1000:03d}"


def table(
    a: argparse.Namespace, headers: Sequence[str], rows: Sequence[Sequence[object]], widths: Sequence[int] = ()
) -> None:
    """Rows under ``#`` headers (each column ``widths[i]`` wide, default 24; the last unpadded), or with
    ``--json`` a list of objects keyed by the header names without ``#``."""
    if getattr(a, "json", False):
        keys = [h.lstrip("#") for h in headers]
        print_json([dict(zip(keys, r, strict=True)) for r in rows])
        return
    w = list(widths) or [24] * len(headers)
    w += [24] * (len(headers) - len(w))

    def line(cells: Sequence[object]) -> str:
        *first, last = [java(c) for c in cells]
        return "".join(f"{c:<{w[i]}}" for i, c in enumerate(first)) + last

    print(line(headers))
    for r in rows:
        print(line(r))
