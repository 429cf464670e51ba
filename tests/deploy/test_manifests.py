"""Static checks of deploy/: the Dockerfile, compose.yaml, king.env.example and the Kustomize base.

No container engine or kubectl runs in CI, so nothing else reads these files before a deploy.
They are parsed here and checked against the real code where it matters: a misspelt KING_
variable (Settings ignores unknown ones, so a typo silently falls back to the default), a value
Settings refuses (the pod would crash-loop), a flag `king` does not have, a probe on a path the
app does not serve, a Service or an HPA pointing at nothing, a singleton driver left behind (every
serving replica drives: games are shared out by leases, docs/OPERATIONS.md, "Game ownership").
"""

from __future__ import annotations

import argparse
import ast
import base64
import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy.engine import make_url

from services.bots.urls import UrlPolicy
from services.cli import build_parser
from services.errors import UserError
from services.settings import Settings, load_settings
from tournament.strategies import make_strategy

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
BASE = DEPLOY / "k8s" / "base"
KING_NAME = re.compile(r"\bKING_[A-Z0-9_]+")
SETTING_NAMES = {"KING_" + name.upper() for name in Settings.model_fields}
WORKLOAD_KINDS = ("Deployment", "Job")
# The one long-running role, as compose and the Kustomize base name it: a full `king serve`
# (the API, the driver of its share of the live games, a scheduler candidate), replicated.
ROLES = {
    "server": ("compose:server", "k8s:Deployment/king-server/king"),
}
SERVER = "king-server"  # the Deployment, and the Service, HPA and PDB that point at it


# ---------------------------------------------------------------- readers


@dataclass(frozen=True)
class Instruction:
    keyword: str
    value: str


@functools.cache
def dockerfile() -> tuple[Instruction, ...]:
    """The Dockerfile's instructions, continuation lines joined, comments dropped."""
    out: list[Instruction] = []
    pending = ""
    for raw in (DEPLOY / "Dockerfile").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        keyword, _, value = (pending + line).partition(" ")
        out.append(Instruction(keyword.upper(), value.strip()))
        pending = ""
    return tuple(out)


def runtime_stage() -> list[Instruction]:
    """The instructions of the last stage: the image that runs."""
    found = dockerfile()
    last_from = max(i for i, ins in enumerate(found) if ins.keyword == "FROM")
    return list(found[last_from:])


def only(keyword: str) -> Instruction:
    matches = [ins for ins in runtime_stage() if ins.keyword == keyword]
    assert matches, f"the runtime stage has no {keyword}"
    return matches[-1]  # the last one wins


def exec_form(ins: Instruction) -> list[str]:
    """ENTRYPOINT/CMD in JSON form (the shell form would put /bin/sh -c in front of tini)."""
    value = json.loads(ins.value)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), ins
    return value


def image_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for ins in runtime_stage():
        if ins.keyword == "ENV":
            for pair in shlex.split(ins.value):
                name, sep, value = pair.partition("=")
                assert sep, f"ENV {pair!r}: use the NAME=value form"
                env[name] = value
    return env


def image_uid() -> int:
    user = only("USER").value.split(":")[0]
    assert user.isdigit(), f"USER {user}: numeric, so that Kubernetes runAsNonRoot can verify it"
    return int(user)


@functools.cache
def compose() -> dict[str, Any]:
    data = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    assert isinstance(data, dict)
    return data


def service(name: str) -> dict[str, Any]:
    services: dict[str, Any] = compose()["services"]
    assert name in services, f"compose.yaml has no service {name!r}"
    found: dict[str, Any] = services[name]
    return found


@functools.cache
def kustomization() -> dict[str, Any]:
    data = yaml.safe_load((BASE / "kustomization.yaml").read_text())
    assert isinstance(data, dict)
    return data


@functools.cache
def k8s() -> tuple[dict[str, Any], ...]:
    """Every object of the base, in the order kustomization.yaml lists the files."""
    objects: list[dict[str, Any]] = []
    for resource in kustomization()["resources"]:
        objects += [d for d in yaml.safe_load_all((BASE / resource).read_text()) if d]
    return tuple(objects)


def k8s_get(kind: str, name: str) -> dict[str, Any]:
    found = [o for o in k8s() if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, f"the base has {len(found)} {kind} named {name!r}"
    return found[0]


def k8s_all(*kinds: str) -> list[dict[str, Any]]:
    return [o for o in k8s() if o["kind"] in kinds]


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = workload["spec"]["template"]["spec"]
    return spec


def pod_labels(workload: dict[str, Any]) -> dict[str, str]:
    labels: dict[str, str] = workload["spec"]["template"]["metadata"]["labels"]
    return labels


def king_image_name() -> str:
    """The image name the base's containers use; kustomize rewrites it to the registry's."""
    (entry,) = kustomization()["images"]
    name: str = entry["name"]
    return name


def secret_values(secret: dict[str, Any]) -> dict[str, str]:
    values = dict(secret.get("stringData") or {})
    for key, encoded in (secret.get("data") or {}).items():
        values[key] = base64.b64decode(encoded).decode()
    return values


def env_file(path: Path) -> dict[str, str]:
    env: dict[str, str] = {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            name, sep, value = line.partition("=")
            assert sep, f"{path.name}: {line!r} is not NAME=value"
            env[name.strip()] = value
    return env


# ---------------------------------------------------------------- the king processes


@dataclass(frozen=True)
class Process:
    """One container that runs `king`: its arguments after the ENTRYPOINT and its environment."""

    where: str
    argv: tuple[str, ...]
    env: dict[str, str]
    replicas: int
    spec: dict[str, Any]  # the compose service or the k8s container


def compose_processes() -> Iterator[Process]:
    """Compose: image ENV, then the env_file (the git-ignored king.env: its .example here),
    then `environment` (it wins over env_file)."""
    image = compose()["x-king-image"]["image"]
    for name, svc in compose()["services"].items():
        if svc.get("image") != image:
            continue
        command = svc.get("command", exec_form(only("CMD")))
        argv = shlex.split(command) if isinstance(command, str) else command
        env = image_env()
        for entry in svc.get("env_file", []):
            path = DEPLOY / (entry if isinstance(entry, str) else entry["path"])
            if not path.exists():
                path = path.with_name(path.name + ".example")
            env |= env_file(path)
        environment = svc.get("environment") or {}
        if isinstance(environment, list):
            environment = dict(item.split("=", 1) for item in environment)
        env |= {k: str(v) for k, v in environment.items()}
        replicas = (svc.get("deploy") or {}).get("replicas", 1)
        yield Process(f"compose:{name}", tuple(argv), env, replicas, svc)


def k8s_processes() -> Iterator[Process]:
    """Kubernetes: image ENV, then envFrom in order, then `env` (it wins over envFrom)."""
    for workload in k8s_all(*WORKLOAD_KINDS):
        for container in pod_spec(workload)["containers"]:
            env = image_env()
            for source in container.get("envFrom", []):
                prefix = source.get("prefix", "")
                if "configMapRef" in source:
                    data = k8s_get("ConfigMap", source["configMapRef"]["name"])["data"]
                else:
                    data = secret_values(k8s_get("Secret", source["secretRef"]["name"]))
                env |= {prefix + k: str(v) for k, v in data.items()}
            for item in container.get("env", []):
                assert "value" in item, f"{item['name']}: only literal values are modelled here"
                env[item["name"]] = str(item["value"])
            argv = container.get("args", exec_form(only("CMD")))
            replicas = workload["spec"].get("replicas", 1)
            where = f"k8s:{workload['kind']}/{workload['metadata']['name']}/{container['name']}"
            yield Process(where, tuple(argv), env, replicas, container)


PROCESSES = [*compose_processes(), *k8s_processes()]
BY_WHERE = {p.where: p for p in PROCESSES}


@functools.cache
def king_parser() -> argparse.ArgumentParser:
    return build_parser()


def parse(argv: tuple[str, ...]) -> argparse.Namespace:
    """The real `king` parser; argparse's exit on a bad flag becomes a test failure."""
    try:
        ns = king_parser().parse_args(list(argv))
    except SystemExit as exc:
        pytest.fail(f"`king {shlex.join(argv)}` does not parse (exit {exc.code})")
    assert getattr(ns, "handler", None) is not None, f"`king {shlex.join(argv)}` runs nothing"
    return ns


SettingsOf = Callable[[Process], Settings]


@pytest.fixture
def settings_of(monkeypatch: pytest.MonkeyPatch) -> SettingsOf:
    """Settings exactly as `load_settings` builds them from a process's environment."""

    def build(process: Process) -> Settings:
        for name in list(os.environ):
            if name.upper().startswith("KING_"):
                monkeypatch.delenv(name)
        for name, value in process.env.items():
            if name.startswith("KING_"):
                monkeypatch.setenv(name, value)
        try:
            return load_settings()
        except UserError as exc:
            pytest.fail(f"{process.where}: {exc}")

    return build


def role(process: Process, settings: Settings) -> tuple[bool, bool]:
    """(driver, scheduler) as cmd_serve decides them: a --no-* flag forces False."""
    ns = parse(process.argv)
    assert ns.command == "serve", f"{process.where} does not run `king serve`"
    return (
        settings.run_driver and not ns.no_driver,
        settings.run_scheduler and not ns.no_scheduler,
    )


def serve_processes() -> list[Process]:
    return [p for p in PROCESSES if p.argv[:1] == ("serve",)]


@pytest.mark.parametrize("process", serve_processes(), ids=lambda p: p.where)
def test_servers_leave_the_schema_to_the_one_shot_upgrade(process: Process) -> None:
    """`king serve` upgrades an old schema at start by default; here a one-shot `king db
    upgrade` runs first, so the servers only check it (a rollout never migrates from a pod)."""
    assert process.env.get("KING_MIGRATE_AT_START") == "false"
    assert (
        load_settings(migrate_at_start=process.env["KING_MIGRATE_AT_START"]).migrate_at_start
        is False
    )


def health_paths() -> set[str]:
    """The paths HealthController serves, read from its source: importing it would pull in the
    whole service container, seconds for a few string constants."""
    source = ROOT / "services" / "controllers" / "health.py"
    (cls,) = [
        n
        for n in ast.walk(ast.parse(source.read_text()))
        if isinstance(n, ast.ClassDef) and n.name == "HealthController"
    ]
    assert not any(
        isinstance(s, ast.Assign) and any(getattr(t, "id", "") == "path" for t in s.targets)
        for s in cls.body
    ), "HealthController got a path prefix: update health_paths()"
    return {
        d.args[0].value
        for f in cls.body
        if isinstance(f, ast.AsyncFunctionDef | ast.FunctionDef)
        for d in f.decorator_list
        if isinstance(d, ast.Call)
        and isinstance(d.args[0], ast.Constant)
        and isinstance(d.args[0].value, str)
    }


def test_discovery_finds_every_role() -> None:
    """The checks below are parametrised by what is found: make sure something is found."""
    assert set(BY_WHERE) >= {
        "compose:migrate",
        "compose:bot",
        "k8s:Job/king-db-upgrade/migrate",
        *(w for pair in ROLES.values() for w in pair),
    }


# ---------------------------------------------------------------- settings


def test_every_king_variable_named_in_deploy_is_a_setting() -> None:
    """Settings has extra="ignore": a misspelt KING_ name would be dropped without a word."""
    files = [
        DEPLOY / "Dockerfile",
        DEPLOY / "compose.yaml",
        DEPLOY / "king.env.example",
        *sorted(BASE.glob("*.yaml")),
    ]
    named = {(f.relative_to(ROOT), m) for f in files for m in KING_NAME.findall(f.read_text())}
    assert {m for _, m in named} >= {"KING_DATABASE_URL", "KING_ADMIN_TOKEN", "KING_RUN_DRIVER"}
    unknown = sorted(f"{f}: {m}" for f, m in named if m not in SETTING_NAMES)
    assert not unknown, f"not a Settings field: {unknown}"


@pytest.mark.parametrize("process", PROCESSES, ids=lambda p: p.where)
def test_process_environment_is_accepted(process: Process, settings_of: SettingsOf) -> None:
    """Each container's whole environment must load, or the process exits at start."""
    settings = settings_of(process)
    UrlPolicy(settings.bot_url_allow)  # parsed at app start, not by Settings
    if process.argv[:1] in (("serve",), ("db",)):
        url = make_url(settings.url)
        assert url.get_backend_name() == "postgresql", f"{process.where}: {settings.url}"
    if process.argv[:1] == ("serve",):
        assert settings.admin_token, f"{process.where}: no KING_ADMIN_TOKEN"


def test_k8s_env_values_are_strings() -> None:
    """A bare 8000 or true in a ConfigMap, Secret or env value is a YAML number or bool, which
    the API server refuses."""
    values: list[tuple[str, Any]] = []
    for obj in k8s_all("ConfigMap"):
        values += list((obj.get("data") or {}).items())
    for obj in k8s_all("Secret"):
        values += list((obj.get("stringData") or {}).items())
    for workload in k8s_all(*WORKLOAD_KINDS):
        for container in pod_spec(workload)["containers"]:
            values += [(e["name"], e.get("value", "")) for e in container.get("env", [])]
    assert values
    assert [(k, v) for k, v in values if not isinstance(v, str)] == []


def test_compose_environment_values_are_strings() -> None:
    """Compose refuses a bare true/false in `environment`; quote it."""
    values = [
        (name, key, value)
        for name, svc in compose()["services"].items()
        for key, value in (svc.get("environment") or {}).items()
    ]
    assert values
    assert [v for v in values if not isinstance(v[2], str)] == []


# ---------------------------------------------------------------- command lines


def test_entrypoint_is_an_init_then_king() -> None:
    """k8s `args` and compose `command` replace CMD only: they reach `king` through tini."""
    entrypoint = exec_form(only("ENTRYPOINT"))
    assert Path(entrypoint[0]).name in {"tini", "dumb-init", "catatonit"}, entrypoint
    assert entrypoint[-1] == "king"
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["king"] == "services.cli:main"  # whose parser build_parser() is


@pytest.mark.parametrize("process", PROCESSES, ids=lambda p: p.where)
def test_command_line_parses(process: Process) -> None:
    """A flag the CLI lacks would crash-loop the container with a usage message."""
    assert "entrypoint" not in process.spec, "would bypass tini and king"
    assert "command" not in process.spec or process.where.startswith("compose:"), (
        "a k8s `command` replaces the ENTRYPOINT: use `args`"
    )
    parse(process.argv)


def test_image_cmd_parses() -> None:
    parse(tuple(exec_form(only("CMD"))))


@pytest.mark.parametrize("process", serve_processes(), ids=lambda p: p.where)
def test_serve_flags_and_env_agree(process: Process, settings_of: SettingsOf) -> None:
    """`--no-driver` with KING_RUN_DRIVER=true (or the reverse) would leave a reader guessing."""
    ns = parse(process.argv)
    settings = settings_of(process)
    assert (settings.run_driver, settings.run_scheduler) == (
        not ns.no_driver,
        not ns.no_scheduler,
    )


def test_every_serving_replica_drives_and_may_lead(settings_of: SettingsOf) -> None:
    """Games are shared out by leases among all driving processes: a serving replica that does
    not drive only narrows the pool that takes over a lost replica's games."""
    servers = serve_processes()
    assert servers
    for process in servers:
        assert not {"--no-driver", "--no-scheduler"} & set(process.argv), process.where
        assert role(process, settings_of(process)) == (True, True), process.where


@pytest.mark.parametrize("name", sorted(ROLES))
def test_roles_agree_between_compose_and_k8s(name: str, settings_of: SettingsOf) -> None:
    """The same role must run the same way whichever way it is deployed."""
    pair = [BY_WHERE[w] for w in ROLES[name]]
    assert role(pair[0], settings_of(pair[0])) == role(pair[1], settings_of(pair[1]))
    options = [{k: v for k, v in vars(parse(p.argv)).items() if k != "handler"} for p in pair]
    assert options[0] == options[1]
    leases = [settings_of(p).lease_seconds for p in pair]
    assert leases[0] == leases[1], "the same takeover bound whichever way it is deployed"


def test_no_singleton_driver(settings_of: SettingsOf) -> None:
    """The old shape (API replicas plus one driver+scheduler process, replicas: 1, Recreate)
    must not come back: in each deployment kind every `king serve` is the one replicated
    workload, and nothing pins it to one replica."""
    for where in ROLES["server"]:
        prefix = where.split(":")[0] + ":"
        servers = [p.where for p in serve_processes() if p.where.startswith(prefix)]
        assert servers == [where], f"serving workloads: {servers}"
    assert service("server")["deploy"]["replicas"] >= 2
    assert "scale" not in service("server")
    deployments = k8s_all("Deployment")
    assert [d["metadata"]["name"] for d in deployments] == [SERVER]
    (deployment,) = deployments
    assert "replicas" not in deployment["spec"], "the HPA owns the replica count"
    assert deployment["spec"]["strategy"]["type"] == "RollingUpdate"


def test_lease_setting_is_shown(settings_of: SettingsOf) -> None:
    """KING_LEASE_SECONDS sets the takeover bound: written out where an operator looks, and a
    value Settings accepts (the pods would crash-loop on one it refuses)."""
    assert "KING_LEASE_SECONDS" in k8s_get("ConfigMap", "king-config")["data"]
    assert "KING_LEASE_SECONDS" in compose()["x-king-env"]
    for process in serve_processes():
        assert "KING_LEASE_SECONDS" in process.env, process.where
        settings = settings_of(process)
        assert settings.lease_seconds == float(process.env["KING_LEASE_SECONDS"])


@pytest.mark.parametrize("where", ["compose:migrate", "k8s:Job/king-db-upgrade/migrate"])
def test_migration_runs_db_upgrade(where: str) -> None:
    ns = parse(BY_WHERE[where].argv)
    assert (ns.command, ns.db_command) == ("db", "upgrade")


def test_sample_bot_serves_on_the_port_compose_checks() -> None:
    """The bot's --port, its `expose` and its healthcheck URL must be the same port."""
    bot = BY_WHERE["compose:bot"]
    ns = parse(bot.argv)
    assert (ns.command, ns.bot_command) == ("bot", "serve")
    make_strategy(ns.strategy, ns.seed)  # an unknown strategy exits at start
    assert [str(ns.port)] == [str(p) for p in bot.spec["expose"]]
    test = " ".join(bot.spec["healthcheck"]["test"])
    assert re.findall(r"127\.0\.0\.1:(\d+)", test) == [str(ns.port)]


# ---------------------------------------------------------------- Kubernetes


def test_kustomization_lists_every_manifest() -> None:
    """A file left out of `resources` is never applied; one listed but missing fails the build."""
    on_disk = {p.name for p in BASE.glob("*.yaml")} - {"kustomization.yaml"}
    listed = kustomization()["resources"]
    assert len(listed) == len(set(listed))
    assert set(listed) == on_disk


def test_kustomization_namespace_and_image() -> None:
    """The namespace is created by the base, and `images` rewrites the image every pod uses."""
    namespaces = [o["metadata"]["name"] for o in k8s_all("Namespace")]
    assert namespaces == [kustomization()["namespace"]]
    for workload in k8s_all(*WORKLOAD_KINDS):
        for container in pod_spec(workload)["containers"]:
            assert container["image"] == king_image_name(), workload["metadata"]["name"]


def test_server_deployment_rolls_without_downtime() -> None:
    """A rollout starts a new pod before stopping an old one, which hands its games over (two
    drivers overlapping is safe: each game has one owner). Recreate would stop every driver
    and every API replica at once."""
    strategy = k8s_get("Deployment", SERVER)["spec"]["strategy"]
    assert strategy["type"] == "RollingUpdate"
    assert strategy["rollingUpdate"]["maxUnavailable"] == 0
    assert strategy["rollingUpdate"]["maxSurge"] >= 1


DEPLOYMENT_NAMES = [d["metadata"]["name"] for d in k8s_all("Deployment")]


@pytest.mark.parametrize("name", DEPLOYMENT_NAMES)
def test_deployment_probes_and_scrape_port(name: str, settings_of: SettingsOf) -> None:
    """Startup and liveness on /health/live (a database blip must not restart every pod),
    readiness on /health/ready, metrics scraped, all at the port `king serve` listens on."""
    deployment = k8s_get("Deployment", name)
    (container,) = pod_spec(deployment)["containers"]
    process = BY_WHERE[f"k8s:Deployment/{name}/{container['name']}"]
    settings = settings_of(process)
    listen = parse(process.argv).port or settings.port
    ports = {p.get("name"): p["containerPort"] for p in container["ports"]}
    assert list(ports.values()) == [listen]
    served = health_paths()
    expected = {"startupProbe": "/health/live", "livenessProbe": "/health/live"}
    expected["readinessProbe"] = "/health/ready"
    scrape = deployment["spec"]["template"]["metadata"]["annotations"]
    assert scrape["prometheus.io/port"] == str(listen)
    assert scrape["prometheus.io/path"] in served
    for probe, path in expected.items():
        get = container[probe]["httpGet"]
        assert get["path"] == path and path in served, (probe, get)
        assert ports.get(get["port"], get["port"]) == listen, (probe, get)


UNITS = {"m": 1e-3, "": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "Ki": 2.0**10, "Mi": 2.0**20}
UNITS["Gi"] = 2.0**30


def quantity(text: object) -> float:
    match = re.fullmatch(r"([0-9.]+)([A-Za-z]*)", str(text))
    assert match and match[2] in UNITS, f"not a quantity: {text!r}"
    return float(match[1]) * UNITS[match[2]]


@pytest.mark.parametrize("workload", k8s_all(*WORKLOAD_KINDS), ids=lambda w: w["metadata"]["name"])
def test_containers_have_requests_within_limits(workload: dict[str, Any]) -> None:
    """Without requests the HPA's CPU utilisation is undefined; without limits one pod can
    starve the node."""
    for container in pod_spec(workload)["containers"]:
        resources = container["resources"]
        for kind in ("cpu", "memory"):
            request = quantity(resources["requests"][kind])
            assert 0 < request <= quantity(resources["limits"][kind]), (kind, resources)


@pytest.mark.parametrize("workload", k8s_all(*WORKLOAD_KINDS), ids=lambda w: w["metadata"]["name"])
def test_pods_run_as_the_image_user_read_only(
    workload: dict[str, Any], settings_of: SettingsOf
) -> None:
    """Non-root as the image's USER; a read-only root needs /tmp and the data dir mounted."""
    spec = pod_spec(workload)
    name = workload["metadata"]["name"]
    for container in spec["containers"]:
        context = spec.get("securityContext", {}) | container.get("securityContext", {})
        assert context.get("runAsNonRoot") is True, name
        assert context.get("runAsUser", image_uid()) == image_uid() != 0, name
        assert context.get("allowPrivilegeEscalation") is False, name
        if context.get("readOnlyRootFilesystem"):
            settings = settings_of(BY_WHERE[f"k8s:{workload['kind']}/{name}/{container['name']}"])
            mounts = {m["mountPath"] for m in container.get("volumeMounts", [])}
            assert {"/tmp", str(settings.data_dir)} <= mounts, (name, mounts)


def hpa() -> dict[str, Any]:
    (found,) = k8s_all("HorizontalPodAutoscaler")
    return found


def test_hpa_scales_the_serving_deployment(settings_of: SettingsOf) -> None:
    """An HPA on a missing name does nothing. It scales the replicas that drive: at least two
    at all times, so a lost pod's games always have another owner to go to."""
    target = hpa()["spec"]["scaleTargetRef"]
    deployment = k8s_get(target["kind"], target["name"])
    assert (target["apiVersion"], deployment["apiVersion"]) == ("apps/v1", "apps/v1")
    assert target["name"] == SERVER
    (container,) = pod_spec(deployment)["containers"]
    process = BY_WHERE[f"k8s:Deployment/{SERVER}/{container['name']}"]
    assert role(process, settings_of(process)) == (True, True)
    assert 2 <= hpa()["spec"]["minReplicas"] <= hpa()["spec"]["maxReplicas"]
    # Else every `kubectl apply` (or GitOps sync) scales back to that number first.
    assert "replicas" not in deployment["spec"], "the HPA owns the replica count"


def selected(selector: dict[str, str]) -> list[str]:
    return [
        w["metadata"]["name"]
        for w in k8s_all(*WORKLOAD_KINDS)
        if selector.items() <= pod_labels(w).items()
    ]


def test_deployment_selectors_match_their_pods() -> None:
    """The API server refuses a Deployment whose selector misses its own template's labels."""
    for deployment in k8s_all("Deployment"):
        selector = deployment["spec"]["selector"]["matchLabels"]
        assert selected(selector) == [deployment["metadata"]["name"]]


@pytest.mark.parametrize("name", [s["metadata"]["name"] for s in k8s_all("Service")])
def test_service_selects_one_workload_on_a_named_port(name: str) -> None:
    """A selector with a typo has no endpoints; a loose one sends API traffic to the migration
    Job's pod."""
    svc = k8s_get("Service", name)
    (target,) = selected(svc["spec"]["selector"])
    assert target == name
    (container,) = pod_spec(k8s_get("Deployment", target))["containers"]
    port_names = {p.get("name") for p in container["ports"]}
    port_numbers = {p["containerPort"] for p in container["ports"]}
    for port in svc["spec"]["ports"]:
        assert port["targetPort"] in port_names | port_numbers, port


def test_service_is_the_serving_deployment() -> None:
    """One Service, in front of every replica: each serves the whole API."""
    services = k8s_all("Service")
    assert [selected(s["spec"]["selector"]) for s in services] == [[SERVER]]


def test_pdb_keeps_a_driver_and_lets_drains_through() -> None:
    """Voluntary evictions keep at least one serving (and driving) pod; a budget of every
    replica the HPA may leave would block each node drain."""
    (pdb,) = k8s_all("PodDisruptionBudget")
    assert selected(pdb["spec"]["selector"]["matchLabels"]) == [SERVER]
    assert hpa()["spec"]["scaleTargetRef"]["name"] == SERVER
    assert "maxUnavailable" not in pdb["spec"]
    assert 1 <= pdb["spec"]["minAvailable"] < hpa()["spec"]["minReplicas"]


def test_migration_job_restarts_only_on_failure() -> None:
    job = k8s_get("Job", "king-db-upgrade")
    assert pod_spec(job)["restartPolicy"] in {"OnFailure", "Never"}


# After SIGTERM: uvicorn finishes its open requests, then the lifespan stops the scheduler and
# releases the game leases (the hand-over). A kill before that leaves the games unowned until
# their leases expire.
STOP_SECONDS = 20


@pytest.mark.parametrize("name", DEPLOYMENT_NAMES)
def test_grace_period_outlasts_pre_stop(name: str, settings_of: SettingsOf) -> None:
    """SIGTERM comes after preStop: the grace period must leave uvicorn time to stop and the
    process time to hand its games over, and more than a lease's length of it."""
    spec = pod_spec(k8s_get("Deployment", name))
    (container,) = spec["containers"]
    command = container["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep"
    grace = spec["terminationGracePeriodSeconds"]
    assert grace >= float(command[1]) + STOP_SECONDS
    lease = settings_of(BY_WHERE[f"k8s:Deployment/{name}/{container['name']}"]).lease_seconds
    assert grace > float(command[1]) + lease


# ---------------------------------------------------------------- compose


def test_postgres_has_a_healthcheck() -> None:
    check = service("postgres")["healthcheck"]
    assert not check.get("disable") and "pg_isready" in " ".join(check["test"])


def test_migrate_waits_for_a_healthy_postgres_and_runs_once() -> None:
    migrate = service("migrate")
    assert migrate["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert migrate.get("restart", "no") in {"no", "on-failure"}, "a restarted one-shot never ends"


@pytest.mark.parametrize("name", sorted(ROLES))
def test_servers_wait_for_the_migration(name: str) -> None:
    """Both refuse an old schema: they start only after `db upgrade` succeeded."""
    condition = service(name)["depends_on"]["migrate"]["condition"]
    assert condition == "service_completed_successfully"


def port_mapping(text: object) -> tuple[list[int], int]:
    """("8001-8002:8000") -> ([8001, 8002], 8000). Unquoted, 80:80 is a YAML 1.1 number."""
    assert isinstance(text, str), f"quote the port mapping {text!r}"
    host, _, container = text.rpartition(":")
    first, _, last = host.partition("-")
    return list(range(int(first), int(last or first) + 1)), int(container)


def test_server_has_replicas_each_with_a_host_port() -> None:
    server = service("server")
    assert server["deploy"]["replicas"] >= 2, "a stopped replica's games need another owner"
    (mapping,) = server["ports"]
    hosts, _ = port_mapping(mapping)
    assert len(hosts) == server["deploy"]["replicas"], (
        "one host port per replica, or the second one cannot start"
    )


def duration_seconds(text: object) -> float:
    """A compose duration such as 30s, 1m30s or 500ms."""
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|us|h|m|s)", str(text))
    assert parts and "".join(n + u for n, u in parts) == str(text), f"not a duration: {text!r}"
    scale = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6}
    return sum(float(n) * scale[u] for n, u in parts)


@pytest.mark.parametrize("name", sorted(ROLES))
def test_compose_stop_leaves_time_for_the_hand_over(name: str, settings_of: SettingsOf) -> None:
    """Compose's default is 10 s before SIGKILL: too short for uvicorn to finish and the
    process to release its leases (docker compose stop, and every `up` that recreates it)."""
    process = BY_WHERE[f"compose:{name}"]
    grace = duration_seconds(process.spec["stop_grace_period"])
    assert grace >= STOP_SECONDS
    assert grace > settings_of(process).lease_seconds


@pytest.mark.parametrize("name", sorted(ROLES))
def test_published_port_is_the_port_king_listens_on(name: str, settings_of: SettingsOf) -> None:
    process = BY_WHERE[f"compose:{name}"]
    listen = parse(process.argv).port or settings_of(process).port
    assert [port_mapping(m)[1] for m in process.spec["ports"]] == [listen]


@pytest.mark.parametrize("name", ["migrate", *sorted(ROLES)])
def test_database_url_reaches_the_postgres_service(name: str, settings_of: SettingsOf) -> None:
    """Host, user, password and database must be those the postgres service creates."""
    url = make_url(settings_of(BY_WHERE[f"compose:{name}"]).url)
    pg = service("postgres")["environment"]
    assert url.host is not None and url.host in compose()["services"]
    assert service(url.host)["image"].startswith("postgres:")
    assert (url.username, url.password, url.database) == (
        pg["POSTGRES_USER"],
        pg["POSTGRES_PASSWORD"],
        pg["POSTGRES_DB"],
    )


@pytest.mark.parametrize("name", sorted(ROLES))
def test_read_only_containers_mount_tmp_and_the_data_dir(
    name: str, settings_of: SettingsOf
) -> None:
    process = BY_WHERE[f"compose:{name}"]
    assert process.spec["read_only"] is True
    assert {"/tmp", str(settings_of(process).data_dir)} <= set(process.spec["tmpfs"])


def test_compose_builds_this_dockerfile() -> None:
    """Every king service has the same image and build: one build, the right Dockerfile."""
    anchor = compose()["x-king-image"]
    context = (DEPLOY / anchor["build"]["context"]).resolve()
    assert context == ROOT
    assert (context / anchor["build"]["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    for process in PROCESSES:
        if process.where.startswith("compose:"):
            assert process.spec["build"] == anchor["build"], process.where


def test_env_file_is_git_ignored() -> None:
    """deploy/king.env holds the real admin token."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    done = subprocess.run(
        ["git", "check-ignore", "-q", "deploy/king.env"], cwd=ROOT, check=False, timeout=10
    )
    assert done.returncode == 0


# ---------------------------------------------------------------- Dockerfile


def test_dockerfile_is_multi_stage() -> None:
    """The compiler-free builder stage stays out of the image: COPY --from a named stage."""
    stages = [ins.value.split() for ins in dockerfile() if ins.keyword == "FROM"]
    assert len(stages) >= 2
    names = {s[-1] for s in stages if len(s) == 3 and s[1].upper() == "AS"}
    sources = re.findall(r"--from=(\S+)", " ".join(i.value for i in runtime_stage()))
    assert sources and set(sources) <= names


def test_image_runs_as_a_non_root_user() -> None:
    assert image_uid() != 0


def test_image_stops_gracefully() -> None:
    """uvicorn drains on SIGTERM or SIGINT (the lifespan stops the driver, frees the lock)."""
    assert only("STOPSIGNAL").value in {"SIGTERM", "SIGINT"}


def test_healthcheck_asks_liveness_on_the_exposed_port() -> None:
    check = only("HEALTHCHECK").value
    assert "/health/live" in check and "/health/live" in health_paths()
    default_port = str(Settings.model_fields["port"].default)
    assert re.findall(r"'KING_PORT', '(\d+)'", check) == [default_port]
    assert only("EXPOSE").value.split() == [default_port]


def test_exposed_port_is_the_manifests_port() -> None:
    exposed = {int(p.split("/")[0]) for p in only("EXPOSE").value.split()}
    k8s_ports = {
        p["containerPort"]
        for w in k8s_all("Deployment")
        for c in pod_spec(w)["containers"]
        for p in c["ports"]
    }
    compose_ports = {port_mapping(m)[1] for name in ROLES for m in service(name)["ports"]}
    assert k8s_ports == compose_ports == exposed


OUT_OF_IMAGE = {"bench"}


def dockerignore_patterns() -> list[str]:
    lines = (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def glob_regex(pattern: str) -> re.Pattern[str]:
    out = ""
    for token in re.split(r"(\*\*/|\*\*|\*|\?)", pattern.strip("/")):
        out += {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}.get(
            token, re.escape(token)
        )
    return re.compile(out)


def ignored(path: str) -> bool:
    """Docker's rule: the last matching pattern decides; a matched directory takes its files."""
    parts = path.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    result = False
    for pattern in dockerignore_patterns():
        negate = pattern.startswith("!")
        regex = glob_regex(pattern.removeprefix("!"))
        if any(regex.fullmatch(prefix) for prefix in prefixes):
            result = not negate
    return result


def test_build_context_keeps_sources_and_drops_secrets() -> None:
    """What the builder COPYs must reach it; the venv, tests, data and king.env must not."""
    copies = [ins.value.split()[:-1] for ins in dockerfile() if ins.keyword == "COPY"]
    sources = [src for args in copies if not args[0].startswith("--") for src in args]
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    included = {p.rstrip("*") for p in setup["packages"]["find"]["include"]} - OUT_OF_IMAGE
    assert included <= set(sources), "a package pyproject.toml installs is not copied"
    # The benchmarks are no part of the service: neither copied nor in the context.
    assert not OUT_OF_IMAGE & set(sources)
    assert all(ignored(f"{package}/cli.py") for package in OUT_OF_IMAGE)
    # What the wheel carries: the modules and the package data (templates, migrations...).
    kept = ["*.py", *setup["package-data"]["*"]]
    needed = [
        str(path.relative_to(ROOT))
        for src in sources
        for path in ([ROOT / src] if (ROOT / src).is_file() else (ROOT / src).rglob("*"))
        if path.is_file() and (path.parent == ROOT or any(path.match(g) for g in kept))
    ]
    # The native build's outputs are made by the install: the image compiles its own, and a
    # host's (another platform's, maybe stale) must never reach it.
    native = ["domain/native.json", "domain/deal.cpython-311-x86_64-linux-gnu.so"]
    needed = [p for p in needed if p not in native and not p.endswith(".so")]
    assert len(needed) > 10
    assert [p for p in needed if ignored(p)] == []
    for path in (
        ".venv/bin/python",
        "tests/conftest.py",
        "var/king.db",
        "deploy/king.env",
        *native,
    ):
        assert ignored(path), path


@pytest.mark.parametrize("process", serve_processes(), ids=lambda p: p.where)
def test_every_replica_signs_with_one_shared_log_key(process: Process) -> None:
    """A replica left to generate its own key (into a pod's or container's own data directory)
    would sign checkpoints with a key no verifier knows, a new one at every restart."""
    path = process.env.get("KING_LOG_KEY_FILE", "")
    assert path and not path.startswith(process.env["KING_DATA_DIR"]), process.where
    folder = str(Path(path).parent)
    if process.where.startswith("compose:"):
        mounts = dict(m.split(":")[:2][::-1] for m in process.spec.get("volumes", []))
        volume = mounts.get(folder)
        assert volume in (compose().get("volumes") or {}), f"{folder}: not a named volume"
        maker = service("log-key")
        assert f"{volume}:{maker['command'][3].rsplit('/', 1)[0]}" in maker["volumes"]
        parse(tuple(maker["command"]))
        assert Path(maker["command"][3]).name == Path(path).name
    else:
        (deployment,) = [w for w in k8s_all("Deployment") if process.where.split("/")[1] in str(w)]
        spec = pod_spec(deployment)
        (mount,) = [m for m in process.spec["volumeMounts"] if m["mountPath"] == folder]
        assert mount.get("readOnly") is True
        (volume,) = [v for v in spec["volumes"] if v["name"] == mount["name"]]
        assert "secret" in volume, "the key comes from a Secret, the same for every replica"


# ---------------------------------------------------------------- lock files and base image

REQUIREMENTS = ROOT / "requirements"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+) \\$")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.cache
def locked(name: str) -> dict[str, tuple[str, int]]:
    """A lock file's pins: {name: (version, number of hashes)}."""
    pins: dict[str, tuple[str, int]] = {}
    current = ""
    for line in (REQUIREMENTS / name).read_text().splitlines():
        found = PIN.match(line)
        if found:
            current = canonical(found[1])
            assert current not in pins, f"{name}: {current} pinned twice"
            pins[current] = (found[2], 0)
        elif line.strip().startswith("--hash=sha256:") and current:
            version, hashes = pins[current]
            pins[current] = (version, hashes + 1)
        elif line.strip() and not line.lstrip().startswith("#"):
            assert line.startswith("    "), f"{name}: an unexpected line {line!r}"
    return pins


def declared(extra: str | None = None) -> dict[str, str]:
    """pyproject.toml's requirements (the runtime ones, or an extra's): {name: specifier}."""
    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = project["dependencies"] if extra is None else project["optional-dependencies"][extra]
    return {canonical(r.name): str(r.specifier) for r in map(Requirement, lines)}


def test_lock_files_pin_every_declared_dependency_within_its_range_with_hashes() -> None:
    from packaging.specifiers import SpecifierSet

    runtime, dev = locked("runtime.txt"), locked("dev.txt")
    expected = {
        "runtime.txt": declared(),
        "dev.txt": {**declared(), **declared("dev"), **declared("bench")},
    }
    for name, pins in (("runtime.txt", runtime), ("dev.txt", dev)):
        for dep, spec in expected[name].items():
            assert dep in pins, f"{name} does not pin {dep}"
            assert pins[dep][0] in SpecifierSet(spec), (name, dep, pins[dep][0], spec)
        assert all(hashes for _version, hashes in pins.values()), name
    # One set of runtime versions: dev.txt is compiled against runtime.txt's pins.
    assert {d: v for d, (v, _h) in dev.items() if d in runtime} == {
        d: v for d, (v, _h) in runtime.items()
    }
    # The image's lock holds no test or benchmark tool.
    assert not {"pytest", "mypy", "ruff", "open-spiel", "eventsourcing"} & set(runtime)


def test_lock_files_say_how_they_were_made() -> None:
    script = (REQUIREMENTS / "refresh").read_text()
    assert "--generate-hashes" in script and "--constraint requirements/runtime.txt" in script
    assert os.access(REQUIREMENTS / "refresh", os.X_OK)
    for name in ("runtime.txt", "dev.txt"):
        head = (REQUIREMENTS / name).read_text()[:600]
        assert "pip-compile" in head and "--generate-hashes" in head, name
        assert "Python 3.11" in head, name


def test_ci_installs_from_the_lock_then_the_project_alone() -> None:
    run = (ROOT / ".ci" / "run").read_text()
    installs = [line for line in run.splitlines() if "pip install" in line and "-r " in line]
    assert installs and all("--require-hashes" in i for i in installs)
    assert any("requirements/dev.txt" in i for i in installs)
    assert re.search(r"pip install -q --no-deps -e \.$", run, re.MULTILINE)
    assert "'.[dev,bench]'" not in run  # nothing resolved afresh in CI


def test_image_installs_from_the_runtime_lock_then_the_project_alone() -> None:
    runs = [ins.value for ins in dockerfile() if ins.keyword == "RUN"]
    assert any("--require-hashes" in r and "-r requirements/runtime.txt" in r for r in runs)
    installs = [part for r in runs for part in r.split("&&") if "pip install" in part]
    for part in installs:
        if "--upgrade pip" in part:
            continue
        assert "--no-deps" in part, part  # nothing outside the lock is resolved
    copies = [ins.value for ins in dockerfile() if ins.keyword == "COPY"]
    assert any(c.startswith("requirements/runtime.txt ") for c in copies)
    assert not ignored("requirements/runtime.txt")


def test_base_image_is_pinned_by_digest() -> None:
    args = {
        name: value
        for ins in dockerfile()
        if ins.keyword == "ARG" and "=" in ins.value
        for name, value in [ins.value.split("=", 1)]
    }
    for ins in dockerfile():
        if ins.keyword != "FROM":
            continue
        image = ins.value.split()[0]
        if image.startswith("${") and image.endswith("}"):
            image = args[image[2:-1]]
        assert re.fullmatch(r"python:3\.11-slim@sha256:[0-9a-f]{64}", image), image


# ---------------------------------------------------------------- network, spread, overlay


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    match = selector.get("matchLabels", {})
    assert set(selector) <= {"matchLabels"}, "only matchLabels are checked here"
    return all(labels.get(k) == v for k, v in match.items())


def test_every_workload_has_a_network_policy_for_ingress_and_egress() -> None:
    policies = k8s_all("NetworkPolicy")
    for workload in k8s_all(*WORKLOAD_KINDS):
        labels = pod_labels(workload)
        mine = [p for p in policies if selects(p["spec"]["podSelector"], labels)]
        assert mine, f"no NetworkPolicy selects {workload['metadata']['name']}"
        types = {t for p in mine for t in p["spec"]["policyTypes"]}
        assert types == {"Ingress", "Egress"}, workload["metadata"]["name"]


def egress_ports(policy: dict[str, Any]) -> set[tuple[str, int]]:
    return {
        (port.get("protocol", "TCP"), port["port"])
        for rule in policy["spec"].get("egress", [])
        for port in rule.get("ports", [])
    }


def test_network_policies_let_the_servers_work() -> None:
    server = k8s_get("NetworkPolicy", SERVER)
    deployment = k8s_get("Deployment", SERVER)
    assert selects(server["spec"]["podSelector"], pod_labels(deployment))
    (container,) = pod_spec(deployment)["containers"]
    (port,) = container["ports"]
    allowed_in = {p["port"] for rule in server["spec"]["ingress"] for p in rule["ports"]}
    assert allowed_in == {port["containerPort"]}
    sources = [s for rule in server["spec"]["ingress"] for s in rule["from"]]
    assert sources and all("namespaceSelector" in s for s in sources)  # never from anywhere
    # DNS, PostgreSQL, Redis (shared rate limits) and the push bots (HTTP, HTTPS).
    assert {("UDP", 53), ("TCP", 53), ("TCP", 5432), ("TCP", 6379)} <= egress_ports(server)
    assert {("TCP", 80), ("TCP", 443)} <= egress_ports(server)
    anywhere = [
        block
        for rule in server["spec"]["egress"]
        for peer in rule["to"]
        if (block := peer.get("ipBlock", {})).get("cidr") == "0.0.0.0/0"
    ]
    for block in anywhere:  # the cloud metadata address stays out of reach
        assert "169.254.0.0/16" in block.get("except", []), block
    migrate = k8s_get("NetworkPolicy", "king-db-upgrade")
    assert migrate["spec"]["ingress"] == []
    assert egress_ports(migrate) == {("UDP", 53), ("TCP", 53), ("TCP", 5432)}


def test_server_replicas_spread_over_zones_and_nodes() -> None:
    deployment = k8s_get("Deployment", SERVER)
    spread = pod_spec(deployment)["topologySpreadConstraints"]
    keys = {c["topologyKey"] for c in spread}
    assert keys == {"topology.kubernetes.io/zone", "kubernetes.io/hostname"}
    for constraint in spread:
        assert selects(constraint["labelSelector"], pod_labels(deployment))
        assert constraint["maxSkew"] >= 1
        assert constraint["whenUnsatisfiable"] in {"DoNotSchedule", "ScheduleAnyway"}
        # Each rollout's pods spread among themselves, not against the old ones going away.
        assert constraint.get("matchLabelKeys") == ["pod-template-hash"]


OVERLAY = DEPLOY / "k8s" / "overlays" / "example"


@functools.cache
def overlay() -> dict[str, Any]:
    data = yaml.safe_load((OVERLAY / "kustomization.yaml").read_text())
    assert isinstance(data, dict)
    return data


def overlay_get(kind: str) -> dict[str, Any]:
    objects = [
        d
        for resource in overlay()["resources"]
        if resource.endswith(".yaml")
        for d in yaml.safe_load_all((OVERLAY / resource).read_text())
        if d
    ]
    (found,) = [o for o in objects if o["kind"] == kind]
    return found


def test_overlay_builds_on_the_base_and_lists_its_files() -> None:
    resources = overlay()["resources"]
    assert "../../base" in resources
    assert overlay()["namespace"] == kustomization()["namespace"]
    on_disk = {p.name for p in OVERLAY.glob("*.yaml")} - {"kustomization.yaml"}
    assert {r for r in resources if r.endswith(".yaml")} == on_disk


def test_ingress_routes_the_public_paths_to_the_service_and_never_metrics() -> None:
    ingress = overlay_get("Ingress")
    svc = k8s_get("Service", SERVER)
    port_names = {p["name"] for p in svc["spec"]["ports"]}
    paths = [p for rule in ingress["spec"]["rules"] for p in rule["http"]["paths"]]
    assert {p["path"] for p in paths} >= {"/", "/api"}
    for path in paths:
        backend = path["backend"]["service"]
        assert backend["name"] == SERVER and backend["port"]["name"] in port_names
    # Internal paths are not routed: /metrics (Prometheus scrapes pods) and /health (probes).
    for internal in ("/metrics", *sorted(health_paths())):
        for path in paths:
            prefix = path["path"].rstrip("/")
            reaches = (
                internal == path["path"]
                if path["pathType"] == "Exact"
                else internal == prefix or internal.startswith(prefix + "/")
            )
            assert not reaches, (internal, path)
    hosts = {h for t in ingress["spec"]["tls"] for h in t["hosts"]}
    assert {r["host"] for r in ingress["spec"]["rules"]} <= hosts


def test_service_monitor_scrapes_metrics_on_the_servers_service() -> None:
    monitor = overlay_get("ServiceMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    svc = k8s_get("Service", SERVER)
    assert selects(monitor["spec"]["selector"], svc["metadata"]["labels"])
    assert monitor["spec"]["namespaceSelector"]["matchNames"] == [kustomization()["namespace"]]
    port_names = {p["name"] for p in svc["spec"]["ports"]}
    for endpoint in monitor["spec"]["endpoints"]:
        assert endpoint["port"] in port_names
        assert endpoint["path"] == "/metrics" and "/metrics" in health_paths()
        assert duration_seconds(endpoint["scrapeTimeout"]) < duration_seconds(endpoint["interval"])


# ---------------------------------------------------------------- compose: shared rate limits


def test_compose_servers_share_rate_limits_in_its_redis(settings_of: SettingsOf) -> None:
    redis = service("redis")
    assert redis.get("healthcheck", {}).get("test"), "redis has no health check"
    for process in serve_processes():
        if not process.where.startswith("compose:"):
            continue
        store = settings_of(process).rate_limit_store
        url = make_url(store)
        assert url.drivername == "redis" and url.host == "redis", store
        name = process.where.split(":", 1)[1]
        assert service(name)["depends_on"]["redis"]["condition"] == "service_healthy"
