"""Generated protobuf/gRPC stubs of apache/rocketmq-apis v2.1.2 (commit 68c2cc9): ``definition``, ``service``,
``admin``. Do not edit: regenerate with ``python scripts/gen_grpc_stubs.py`` from ``proto/`` (flat file names, so the
descriptors match the official Python client's wheel and both load in one interpreter).
"""
