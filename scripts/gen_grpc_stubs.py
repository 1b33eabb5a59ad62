"""Regenerate the checked-in RocketMQ 5 gRPC stubs in ``broker/proxy/pb/`` from the protos beside them.

    python scripts/gen_grpc_stubs.py          (needs grpcio-tools; the extra [grpc] plus grpcio-tools)

The protos in ``broker/proxy/pb/proto/`` are apache/rocketmq-apis tag v2.1.2 (commit 68c2cc9), the version the
official 5.x clients ship, copied into ONE flat directory with ``import "apache/rocketmq/v2/definition.proto"``
rewritten to ``import "definition.proto"`` (docs/reference/grpc_v5.md §1): the official Python client's wheel registers its
descriptors under the flat names ``definition.proto``/``service.proto``, so stubs generated under the
``apache/rocketmq/v2/`` paths could not be loaded in the same interpreter (duplicate symbol). With flat names the
serialized descriptors are byte-identical to the wheel's and both load together.

protoc emits ``import definition_pb2``; this script rewrites it to a package-relative import.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

PB = Path(__file__).resolve().parent.parent / "broker" / "proxy" / "pb"
PROTOS = ("definition.proto", "service.proto", "admin.proto")


def main() -> int:
    src = PB / "proto"
    cmd = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        f"-I{src}",
        f"--python_out={PB}",
        f"--grpc_python_out={PB}",
        f"--pyi_out={PB}",
        *(str(src / p) for p in PROTOS),
    ]
    subprocess.run(cmd, check=True)
    for path in [*PB.glob("*_pb2*.py"), *PB.glob("*_pb2*.pyi")]:
        text = path.read_text()
        fixed = re.sub(r"^import (\w+_pb2) as", r"from . import \1 as", text, flags=re.M)
        fixed = re.sub(r"^import (\w+_pb2)$", r"from . import \1", fixed, flags=re.M)
        if fixed != text:
            path.write_text(fixed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
