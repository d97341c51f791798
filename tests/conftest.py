"""Shared fixtures."""

from tests.kafka_fixtures import kafka_broker, kafka_settings  # noqa: F401
from tests.milvus_server_fixtures import milvus_server  # noqa: F401
