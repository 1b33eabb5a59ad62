"""A Spark write to a topic that does not exist (auto-create off) fails with ``No route info of this topic`` within
the first lines of the error Spark raises, not under the frames of the connector, its event loop and the client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.spark.support import start_cluster

pytestmark = pytest.mark.spark

TOPIC = "spark_no_such_topic"


def test_a_missing_topic_leads_with_no_route_info(spark: Any, tmp_path: Path) -> None:
    own = start_cluster(tmp_path / "servers", broker_name="broker-n", broker_extra="autoCreateTopicEnable=false\n")
    try:
        df = spark.createDataFrame([("x",)], "body string")
        with pytest.raises(Exception, match=f"No route info of this topic: {TOPIC}") as info:
            df.write.format("rocketmq").option("namesrvAddr", own.namesrv_addr).option("topic", TOPIC).mode(
                "append"
            ).save()
    finally:
        own.stop()
    lines = str(info.value).splitlines()
    first = next(i for i, line in enumerate(lines) if f"No route info of this topic: {TOPIC}" in line)
    # Spark's header, "Traceback", one frame (two lines), the cause: not the connector's and the loop's frames first
    assert first <= 5, "\n".join(lines[: first + 1])
    assert not any("The above exception was the direct cause" in line for line in lines)
