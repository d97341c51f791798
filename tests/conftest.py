"""Shared fixtures."""

from tests.kafka_fixtures import kafka_broker, kafka_settings  # noqa: F401
