"""The driver's planning workers import only what planning needs.

Spark starts a fresh Python worker per streaming query (and per ``.load()``) that unpickles the data source, so every
module imported with it is paid once per query. Reading (Arrow decoding, property columns) and the sink's encoder
belong to executors and are imported where they are used.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("pyspark")

EXECUTOR_ONLY = [
    "spark_connector.reader",
    "spark_connector.records",
    "spark_connector.property_columns",
    "spark_connector.sink",
    "spark_connector.sink_columns",
    "pyarrow.compute",
]


def _imported_after(module: str) -> list[str]:
    code = f"import json, sys, {module}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    loaded = set(json.loads(out))
    return [m for m in EXECUTOR_ONLY if m in loaded]


@pytest.mark.parametrize("module", ["spark_connector.datasource", "spark_connector.source"])
def test_planning_modules_do_not_import_the_executor_side(module: str) -> None:
    assert _imported_after(module) == []


def test_stream_reader_plans_partitions_without_the_reader() -> None:
    code = (
        "import json, sys\n"
        "from spark_connector.options import parse_source_options\n"
        "from spark_connector.source import RocketMQStreamReader\n"
        "r = RocketMQStreamReader(parse_source_options({'namesrvAddr': '127.0.0.1:9876', 'subscribe': 't'},"
        " streaming=True))\n"
        "parts = r.partitions({'t': {'b': {'0': 0}}}, {'t': {'b': {'0': 5}}})\n"
        "print(json.dumps([repr(p) for p in parts] + ['spark_connector.reader' in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert json.loads(out) == ["RocketMQPartition(t/b/0[0, 5))", False]
