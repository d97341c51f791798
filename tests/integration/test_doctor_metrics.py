"""`episodic doctor` against real backends, and the query server's Prometheus endpoint.

The doctor runs on the embedded default (Milvus Lite, the bundled models), against the
session's Kafka broker, an OpenAI-compatible stand-in server and a gRPC server on loopback;
each misconfiguration a deployment meets (wrong vector dimensions, a model the LLM server
does not serve, a server that is down) must come out as a failed check with a message that
names the cause.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from episodic import server as server_mod
from episodic.components import Components
from episodic.config import Settings
from episodic.dev_broker import free_port
from episodic.doctor import FAIL, OK, SKIP, WARN, Doctor
from episodic.memory.milvus_store import MilvusStore
from episodic.proto.episodic.v1 import episodic_pb2 as pb
from episodic.proto.episodic.v1 import episodic_pb2_grpc as pb_grpc
from episodic.stream import kafka_io
from tests.cli_runner import run_cli
from tests.kafka_fixtures import kafka_test_settings
from tests.openai_standin import ChatStandIn, chat_reply


def _by_name(results) -> dict:
    return {r.name: r for r in results}


def test_doctor_passes_on_the_embedded_default_with_kafka(tmp_path: Path, kafka_broker) -> None:
    settings = kafka_test_settings(kafka_broker, Settings(data_dir=tmp_path / "data"), name="doctor")
    doc = Doctor(settings, kafka_timeout_s=10)
    try:
        before = _by_name(doc.run(only=["config", "store", "snippets", "kafka", "server"]))
        assert before["store"].status == OK and "empty" in before["store"].detail
        assert before["snippets"].status == OK
        # the topic does not exist yet: works, but says so
        assert before["kafka"].status == WARN and settings.kafka_topic in before["kafka"].detail
        assert before["server"].status == SKIP

        kafka_io.ensure_topics(settings)
        doc.c.ensure_schema()
        after = _by_name(doc.run())
    finally:
        doc.c.close()
    assert {n: r.status for n, r in after.items()} == {
        "config": OK, "store": OK, "snippets": OK, "embedder": OK, "asr": OK,
        "describer": OK, "llm": OK, "kafka": OK, "server": SKIP,
    }, {n: (r.status, r.detail) for n, r in after.items()}
    assert f"{settings.kafka_partitions} partitions" in after["kafka"].detail
    assert "384-d" in after["store"].detail and "384-d" in after["embedder"].detail
    # the bundled model works but answers nothing by default: the doctor says so
    assert "Ask does not ask it (answer_model = auto)" in after["llm"].detail, after["llm"].detail


def test_doctor_names_a_store_built_for_other_vectors(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    with MilvusStore(settings) as store:  # a store built by a 1024-d embedder (ImageBind)
        store.ensure_schema(1024, 1280, models={"embedder": "imagebind_huge"})
    doc = Doctor(settings)
    try:
        (result,) = doc.run(only=["store"])
    finally:
        doc.c.close()
    assert result.status == FAIL
    assert "1024-d" in result.detail and "384-d" in result.detail and "imagebind_huge" in result.detail


def test_doctor_checks_the_openai_compatible_server(tmp_path: Path) -> None:
    standin = ChatStandIn()
    try:
        settings = Settings(data_dir=tmp_path / "data", llm="openai", openai_base_url=standin.url,
                            openai_model="test-model", openai_max_retries=0)
        standin.script = [(200, chat_reply("ready"))]
        doc = Doctor(settings)
        (ok,) = doc.run(only=["llm"])
        assert ok.status == OK and "serves test-model" in ok.detail, ok.detail
        assert "does not ask" not in ok.detail  # a capable backend is asked by default
        assert standin.requests[-1][2]["model"] == "test-model"

        standin.models = ["Qwen/Qwen2.5-VL-7B-Instruct"]
        (wrong,) = Doctor(settings).run(only=["llm"])
        assert wrong.status == FAIL
        assert "Qwen/Qwen2.5-VL-7B-Instruct" in wrong.detail and "test-model" in wrong.detail
    finally:
        standin.close()
    # and the server gone
    (down,) = Doctor(settings).run(only=["llm"])
    assert down.status == FAIL and "cannot reach" in down.detail


def test_doctor_checks_a_running_server(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", grpc_port=0)
    components = Components(settings)
    handle = server_mod.create_server(settings, components)
    handle.server.start()
    try:
        (up,) = Doctor(settings, components, server=handle.address).run(only=["server"])
        assert up.status == OK and "SERVING" in up.detail
        handle.health.enter_graceful_shutdown()
        (leaving,) = Doctor(settings, components, server=handle.address).run(only=["server"])
        assert leaving.status == FAIL and "NOT_SERVING" in leaving.detail
    finally:
        handle.stop(0)
        components.close()
    (gone,) = Doctor(settings, server=handle.address).run(only=["server"])
    assert gone.status == FAIL and "UNAVAILABLE" in gone.detail


def test_doctor_cli_json_and_exit_code(tmp_path: Path) -> None:
    data = tmp_path / "data"
    ok = run_cli("doctor", "--check", "config", "--check", "store", "--json", data=data)
    doc = json.loads(ok.stdout)
    assert doc["ok"] is True and [c["name"] for c in doc["checks"]] == ["config", "store"]

    env = {"EPISODIC_LLM": "openai", "EPISODIC_OPENAI_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",
           "EPISODIC_OPENAI_MAX_RETRIES": "0"}
    bad = run_cli("doctor", "--check", "llm", "--json", data=data, env=env, check=False)
    assert bad.returncode == 1
    checks = json.loads(bad.stdout)["checks"]
    assert checks[0]["status"] == "fail" and "cannot reach" in checks[0]["detail"]

    unknown = run_cli("doctor", "--check", "gpu", data=data, check=False)
    assert unknown.returncode == 2 and "unknown check" in unknown.stderr


# -- the query server's metrics endpoint -----------------------------------------------------------
def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        return r.read().decode()


def _value(text: str, series: str) -> float:
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    return 0.0


def test_serve_exposes_metrics_and_reports_ready_after_warm_up(tmp_path: Path) -> None:
    metrics_port = free_port()
    settings = Settings(data_dir=tmp_path / "data", grpc_port=0, metrics_port=metrics_port,
                        serve_warm_up=True, grpc_grace_s=1)
    stop = threading.Event()
    ready: list[server_mod.ServerHandle] = []
    thread = threading.Thread(target=server_mod.serve, args=(settings,),
                              kwargs={"on_ready": ready.append, "stop": stop}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not ready and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready, "the server did not start"
        address = ready[0].address
        with grpc.insecure_channel(address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            # liveness at once; readiness of the service once the models are loaded
            assert health.Check(health_pb2.HealthCheckRequest(), timeout=10).status == \
                health_pb2.HealthCheckResponse.SERVING
            status = None
            while time.monotonic() < deadline + 120:
                status = health.Check(health_pb2.HealthCheckRequest(service=server_mod.SERVICE_NAME),
                                      timeout=10).status
                if status == health_pb2.HealthCheckResponse.SERVING:
                    break
                time.sleep(0.2)
            assert status == health_pb2.HealthCheckResponse.SERVING

            before = _scrape(metrics_port)
            stub = pb_grpc.EpisodicMemoryStub(channel)
            stub.Search(pb.SearchRequest(query="a red bicycle", top_k=3), timeout=60)
            with pytest.raises(grpc.RpcError) as exc:
                stub.Search(pb.SearchRequest(query="", top_k=3), timeout=60)
            assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        after = _scrape(metrics_port)
    finally:
        stop.set()
        thread.join(30)
    ok = 'episodic_rpc_latency_seconds_count{code="OK",method="Search"}'
    bad = 'episodic_rpc_latency_seconds_count{code="INVALID_ARGUMENT",method="Search"}'
    assert _value(after, ok) == _value(before, ok) + 1
    assert _value(after, bad) == _value(before, bad) + 1
    embeds = 'episodic_model_latency_seconds_count{operation="embed_texts",role="embedder"}'
    assert _value(after, embeds) >= _value(before, embeds) + 1  # the query was embedded
    # the endpoint is closed with the server
    with pytest.raises(OSError):
        _scrape(metrics_port)
