"""An S3-compatible server on loopback for tests: moto's server (``moto[server]``), a real S3
HTTP API in a thread of the test process. ``s3_server`` is one per module; ``s3_settings``
gives settings whose snippet_uri points at a fresh, empty bucket on it.

Both are shared through tests/conftest.py; a test that uses them is skipped, saying why,
when moto or boto3 is not installed.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from episodic.config import Settings

ACCESS_KEY, SECRET_KEY, REGION = "episodic-test", "episodic-test-secret", "us-east-1"


@dataclass
class S3Server:
    endpoint_url: str

    def client(self) -> Any:
        import boto3

        return boto3.session.Session(
            aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY, region_name=REGION
        ).client("s3", endpoint_url=self.endpoint_url)

    def new_bucket(self) -> str:
        name = f"episodic-{uuid.uuid4().hex[:16]}"
        self.client().create_bucket(Bucket=name)
        return name

    def settings(self, data_dir: Path, bucket: str, prefix: str = "snips/v1", **more: Any) -> Settings:
        uri = f"s3://{bucket}/{prefix}" if prefix else f"s3://{bucket}"
        return Settings(
            data_dir=data_dir,
            snippet_uri=uri,
            s3_endpoint_url=self.endpoint_url,
            s3_region=REGION,
            s3_access_key_id=ACCESS_KEY,
            s3_secret_access_key=SECRET_KEY,
            **more,
        )


@pytest.fixture(scope="module")
def s3_server() -> Iterator[S3Server]:
    moto_server = pytest.importorskip(
        "moto.server", reason="moto[server] is not installed (pip install -e '.[dev]'): no S3 server to test against"
    )
    pytest.importorskip("boto3", reason="boto3 is not installed (pip install -e '.[s3]')")
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # not one line per request
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield S3Server(f"http://{host}:{port}")
    finally:
        server.stop()


@pytest.fixture()
def s3_settings(s3_server: S3Server, tmp_path: Path) -> Settings:
    return s3_server.settings(tmp_path / "data", s3_server.new_bucket())
