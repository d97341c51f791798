"""Kafka for tests: one in-memory Tansu broker per test session and settings that point at
it with topics and a consumer group of their own, so tests never see each other's messages.

Use the ``kafka_broker`` fixture (re-exported by tests/conftest.py) and
:func:`kafka_test_settings`, or the ``kafka_settings`` fixture that combines them.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from episodic.config import Settings
from episodic.dev_broker import LocalBroker

# Tansu completes a consumer group's first join after about half the session timeout
# (at least ~1 s): 2 s keeps tests quick; heartbeats under a third of it (kafka-python warns
# otherwise). Timeouts are short so a broken broker fails a test in seconds, not minutes.
TEST_KAFKA = {
    "kafka_session_timeout_ms": 2000,
    "kafka_heartbeat_interval_ms": 600,
    "kafka_request_timeout_ms": 10000,
    "kafka_delivery_timeout_ms": 20000,
    "kafka_max_poll_interval_ms": 60000,
    "kafka_partitions": 3,
}


def kafka_test_settings(
    broker: LocalBroker | str, base: Settings | None = None, name: str = "t", **overrides: Any
) -> Settings:
    """Settings for ``broker`` (a LocalBroker or "host:port") with unique topic and group
    names (``name`` makes them readable in broker logs) and test-sized timeouts."""
    bootstrap = broker if isinstance(broker, str) else broker.bootstrap
    tag = re.sub(r"[^A-Za-z0-9._-]+", "-", name)[:60] + "-" + uuid.uuid4().hex[:8]
    values: dict[str, Any] = {
        **TEST_KAFKA,
        "kafka_bootstrap_servers": bootstrap,
        "kafka_topic": f"media.{tag}",
        "kafka_dlq_topic": f"media.{tag}.dlq",
        "kafka_group_id": f"workers.{tag}",
        "kafka_client_id": f"episodic-test-{tag}",
    }
    values.update(overrides)
    return (base or Settings()).replace(**values)


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[LocalBroker]:
    """A Tansu broker on a free 127.0.0.1 port for the whole session (in memory)."""
    broker = LocalBroker()
    try:
        broker.start()
        yield broker
    finally:
        broker.stop()  # runs even when a test (or the start) failed


@pytest.fixture()
def kafka_settings(kafka_broker: LocalBroker, request: pytest.FixtureRequest) -> Settings:
    """Settings pointing at the session broker, with this test's own topics and group."""
    return kafka_test_settings(kafka_broker, name=request.node.name)
