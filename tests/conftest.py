"""Shared fixtures."""

import os
from pathlib import Path

import pytest

from episodic.process import offline_model_hubs
from tests.kafka_fixtures import kafka_broker, kafka_settings  # noqa: F401
from tests.milvus_server_fixtures import milvus_server  # noqa: F401
from tests.s3_fixtures import s3_server, s3_settings  # noqa: F401
from tests.vision_standin import standin, vision  # noqa: F401


def pytest_collection_modifyitems(config, items):
    """The test tiers follow the folders: tests/unit (fast checks of logic, parsing and the
    services over fakes and the in-memory store; ``-m "unit and not slow"`` runs in seconds) and
    tests/integration (real models, Milvus, Kafka, FFmpeg, servers on loopback). ``slow`` marks what runs real models over generated
    recordings, in either folder."""
    for item in items:
        parts = Path(str(item.fspath)).parts
        if "unit" in parts:
            item.add_marker(pytest.mark.unit)
        elif "integration" in parts:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(autouse=True)
def _no_real_time_scheduling_left_behind():
    """Fail the test that leaves this process on real-time CPU scheduling, and undo it.

    Every process a later test starts would inherit it (SVT-AV1, run as root, does this to
    the thread that opens it): real-time model workers on a 2-core machine starve each other
    and CI runs out of time far from the cause."""
    before = (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority)
    yield
    after = (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority)
    if after != before:
        os.sched_setscheduler(0, before[0], os.sched_param(before[1]))
        pytest.fail(f"this test left the process on CPU scheduling {after} (was {before})")

# Two test workers share CI's two cores (pytest-xdist, see pyproject.toml): a model on one
# thread each keeps them from oversubscribing the CPU (test_ingest + test_forget together:
# 76-77 s instead of 82-89 s with the default 2 threads). CLI children inherit it.
os.environ.setdefault("EPISODIC_CPU_THREADS", "1")

# models load from packages and folders only, also in tests that build one without Components
offline_model_hubs()
