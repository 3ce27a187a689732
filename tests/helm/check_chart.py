#!/usr/bin/env python3
"""Offline checks of the Helm chart (helm/okey), run by `make chart` (and so by `make test`).

Through the Helm SDK (PyPI helm-python-sdk, no helm binary, no cluster): lint --strict and render
with the defaults and with helm/values-production.yaml; every rendered manifest through
`kubernetes-validate --strict` for the oldest Kubernetes the chart supports and a current one;
then assertions over the rendered objects (probes, PDBs, NetworkPolicies, security contexts,
labels, secrets, migrations, settings drift against the Rust sources, the operator's extraEnv and
extra volumes) and over the schema (bad values are refused). Each assertion is also run against a
deliberately broken rendering and must fail there, so none of them can pass by accident. The
last line is "chart: N passed, M failed".
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import helm_python as helm
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "okey"
PRODUCTION = ROOT / "helm" / "values-production.yaml"
SETTINGS_RS = ROOT / "crates" / "okey-platform" / "src" / "settings.rs"
# Each service's own settings (okey_platform::settings::ServiceSettings), in services/<name>/src.
SERVICE_SETTINGS_RS = sorted((ROOT / "services").glob("*/src/settings.rs"))
# FLUSH_AT_EXIT: how long a stopping service may spend sending its last spans and metrics.
TELEMETRY_SETUP_RS = ROOT / "crates" / "okey-telemetry" / "src" / "setup.rs"
RUST_DIRS = [ROOT / "crates", ROOT / "services"]
# The oldest Kubernetes the chart supports (Chart.yaml kubeVersion) and a current one.
KUBE_VERSIONS = ["1.30.0", "1.37.0"]
RELEASE = "okey"
NAMESPACE = "okey"
SERVICES = ["accounts", "matchmaking", "table", "scoring"]
# Kinds kubernetes-validate has no schema for (custom resources); checked by assertions here.
CUSTOM_KINDS = {"ServiceMonitor", "PodMonitor"}
# Their API: the chart renders them only where the cluster serves it.
MONITORING_API = "monitoring.coreos.com/v1"
# Settings the chart sets itself rather than from config.<section>.<key>, and where from.
CHART_MANAGED = {"server.port": "services.<name>.port"}
# Settings the chart sets or checks itself (ports, probes, grace, OTLP egress follow them): refused
# in extraEnv and under secrets, which would slip past it.
CHART_GUARDED = ["server.port", "server.grace_period_ms", "server.startup_timeout_ms", "telemetry.otlp_endpoint"]
# A password in a URL (an empty user too: redis://:password@), a NATS token in one, or a private
# key (a CA certificate, as tokens.keys_ca_pem, is public).
CREDENTIAL = re.compile(r"://[^/\s:@]*:[^/\s@]+@|(?:nats|tls)://[^/\s:@]+@|-----BEGIN [A-Z ]*PRIVATE KEY-----")
# A label value: at most 63 characters, alphanumeric at both ends, [-_.] between.
LABEL_VALUE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")


# extraEnv, extraVolumes and extraVolumeMounts, global and per service: a private CA from a Secret
# (docs/operations.md, "TLS with a private CA") and each override rule. Table replaces the global
# RUST_BACKTRACE (by name) and the ca volume (by name: its database's own CA), takes a setting from
# a ConfigMap of the operator's and adds a volume; matchmaking replaces the global mount (by
# mountPath) with a volume of its own. Accounts and scoring get the global ones only.
EXTRAS = {
    "extraEnv": [{"name": "SSL_CERT_FILE", "value": "/etc/okey/ca/ca.pem"},
                 {"name": "RUST_BACKTRACE", "value": "1"}],
    "extraVolumes": [{"name": "ca", "secret": {"secretName": "okey-ca", "defaultMode": 0o444}}],
    "extraVolumeMounts": [{"name": "ca", "mountPath": "/etc/okey/ca", "readOnly": True}],
    "services": {
        "table": {
            "extraEnv": [{"name": "RUST_BACKTRACE", "value": "full"},
                         {"name": "OKEY_TELEMETRY__LOG_FILTER",
                          "valueFrom": {"configMapKeyRef": {"name": "okey-table-logs", "key": "filter"}}}],
            "extraVolumes": [{"name": "ca", "secret": {"secretName": "okey-table-ca"}},
                             {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}],
            "extraVolumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
        },
        "matchmaking": {
            "extraVolumes": [{"name": "matchmaking-ca", "configMap": {"name": "okey-matchmaking-ca"}}],
            "extraVolumeMounts": [{"name": "matchmaking-ca", "mountPath": "/etc/okey/ca", "readOnly": True}],
        },
    },
}


class CheckFailed(Exception):
    """An assertion about the chart did not hold."""


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


# ---------------------------------------------------------------------------------------------
# Rendering


def load_values(path: Path) -> dict:
    return helm.values_from_yaml(path.read_text())


def render_manifests(values: dict | None = None, api_versions: list[str] | None = None,
                     chart_dir: Path = CHART) -> dict[str, str]:
    """Template path -> rendered text. `api_versions`: what the cluster serves beyond the built-in
    APIs (`helm template --api-versions`), which the SDK's Chart.render does not take but its
    native render does. `chart_dir`: another copy of the chart."""
    with helm.Chart.load(chart_dir) as chart:
        chart.validate_schema(values)
        if not api_versions:
            return chart.render(values, name=RELEASE, namespace=NAMESPACE, is_install=True)
        opts = {"name": RELEASE, "namespace": NAMESPACE, "is_install": True, "api_versions": api_versions}
        values_json = None if values is None else json.dumps(values)
        return json.loads(helm._native.call_string("helm_render", chart._raw(), values_json, json.dumps(opts)))


def render(values: dict | None = None, api_versions: list[str] | None = None,
           chart_dir: Path = CHART) -> list[dict]:
    """The chart's objects (NOTES.txt left out), each with its template under `_template`."""
    manifests = render_manifests(values, api_versions, chart_dir)
    objects = []
    for template, text in sorted(manifests.items()):
        if template.endswith("NOTES.txt"):
            continue
        for doc in yaml.safe_load_all(text):
            if doc:
                doc["_template"] = template
                objects.append(doc)
    return objects


def merged_values(values: dict | None) -> dict:
    with helm.Chart.load(CHART) as chart:
        return chart.merge_values(values)


def chart_values() -> dict:
    """values.yaml as written: unlike merged values, a key whose default is null (a setting left
    to the service's built-in default, so the ConfigMaps leave it out) is still a value path."""
    return yaml.safe_load((CHART / "values.yaml").read_text())


def of_kind(objects: list[dict], kind: str) -> list[dict]:
    return [o for o in objects if o["kind"] == kind]


def named(objects: list[dict], kind: str, name: str) -> dict:
    found = [o for o in of_kind(objects, kind) if o["metadata"]["name"] == name]
    expect(len(found) == 1, f"expected one {kind} {name}, found {len(found)}")
    return found[0]


def selects(selector: dict | None, labels: dict) -> bool:
    """Whether a matchLabels selector (the only form the chart uses) selects these labels."""
    match = (selector or {}).get("matchLabels") or {}
    expect(not (selector or {}).get("matchExpressions"), "selectors use matchLabels only")
    return bool(match) and all(labels.get(k) == v for k, v in match.items())


def component(obj: dict) -> str:
    return obj["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]


def service_deployments(objects: list[dict]) -> list[dict]:
    return [d for d in of_kind(objects, "Deployment") if component(d) in SERVICES]


def pod_specs(objects: list[dict]) -> list[tuple[str, dict]]:
    specs = [(f"Deployment {d['metadata']['name']}", d["spec"]["template"]["spec"])
             for d in of_kind(objects, "Deployment")]
    specs += [(f"Pod {p['metadata']['name']}", p["spec"]) for p in of_kind(objects, "Pod")]
    return specs


def config_data(objects: list[dict], service: str) -> dict:
    return named(objects, "ConfigMap", f"{RELEASE}-{service}")["data"]


# ---------------------------------------------------------------------------------------------
# What the Rust sources read


def rust_settings() -> tuple[dict[str, object], set[str]]:
    """Every setting (section.key -> default) from the built-in defaults: the shared ones in
    settings.rs and each service's own (`DEFAULTS` of its settings.rs), and the secret ones
    (fields of type Secret<..>)."""
    text = SETTINGS_RS.read_text()
    found = re.search(r'fn defaults\(.*?r#"(.*?)"#', text, re.S)
    expect(found is not None, "settings.rs: the built-in defaults block was not found")
    blocks = [(SETTINGS_RS, text, found.group(1))]
    for path in SERVICE_SETTINGS_RS:
        own = path.read_text()
        block = re.search(r'const DEFAULTS: &(?:\'static )?str = r#"(.*?)"#', own, re.S)
        expect(block is not None, f"{path.relative_to(ROOT)}: no `const DEFAULTS` block")
        blocks.append((path, own, block.group(1)))
    expect(len(blocks) >= 3, f"only {len(blocks) - 1} services' own settings found")
    settings: dict[str, object] = {}
    secret = set()
    for path, source, block in blocks:
        toml_text = re.sub(r"\{(\w+)\}", lambda m: "0" if m.group(1) == "port" else "x", block)
        table = tomllib.loads(toml_text.replace("{{", "{").replace("}}", "}"))
        for s, keys in table.items():
            for k, v in keys.items():
                expect(f"{s}.{k}" not in settings, f"{path.relative_to(ROOT)}: {s}.{k} is defined twice")
                settings[f"{s}.{k}"] = v
        # Which struct holds which section: `pub <section>: <Struct>` in a settings struct.
        structs = dict(re.findall(r"pub (\w+): (\w+Settings),", source))
        for section, struct in structs.items():
            body = re.search(rf"pub struct {struct} \{{(.*?)\n\}}", source, re.S)
            if body:
                for key in re.findall(r"pub (\w+): Secret<", body.group(1)):
                    secret.add(f"{section}.{key}")
    expect(len(settings) > 20, f"settings.rs: only {len(settings)} settings found in the defaults")
    expect({"database.url", "redis.url", "tokens.signing_keys_pem"} <= secret,
           f"secret settings not found: {secret}")
    return settings, secret


def rust_env_names() -> set[str]:
    """OKEY_<SECTION>__<KEY> names written out in the non-test Rust sources."""
    names = set()
    for base in RUST_DIRS:
        for path in base.rglob("*.rs"):
            if "tests" in path.relative_to(base).parts or "benches" in path.parts:
                continue
            text = path.read_text().split("#[cfg(test)]")[0]
            names.update(re.findall(r"\bOKEY_[A-Z0-9]+(?:_[A-Z0-9]+)*__[A-Z0-9_]+\b", text))
    return names


def flush_at_exit_secs() -> int:
    """FLUSH_AT_EXIT of okey-telemetry: a stopping process's last wait, after its drain."""
    found = re.search(r"pub const FLUSH_AT_EXIT: Duration = Duration::from_secs\((\d+)\);",
                      TELEMETRY_SETUP_RS.read_text())
    expect(found is not None, f"{TELEMETRY_SETUP_RS.relative_to(ROOT)}: FLUSH_AT_EXIT in seconds not found")
    return int(found.group(1))


def stop_budget_secs(pre_stop_s: int, grace_ms: int) -> int:
    """The longest a pod may take to stop: the preStop sleep, the drain in whole seconds (rounded
    up) and the telemetry flush. terminationGracePeriodSeconds must be longer."""
    return pre_stop_s + math.ceil(grace_ms / 1000) + flush_at_exit_secs()


def env_name(setting: str) -> str:
    section, key = setting.split(".", 1)
    return f"OKEY_{section.upper()}__{key.upper()}"


# ---------------------------------------------------------------------------------------------
# Assertions over one rendering. Each takes the objects and the merged values.


def check_probes(objects, values):
    deployments = service_deployments(objects)
    expect(sorted(component(d) for d in deployments) == sorted(SERVICES),
           f"one Deployment per service, found {[component(d) for d in deployments]}")
    for d in deployments:
        name = d["metadata"]["name"]
        (container,) = d["spec"]["template"]["spec"]["containers"]
        ports = {p.get("name"): p["containerPort"] for p in container.get("ports", [])}
        expect("grpc" in ports, f"{name}: no container port named grpc")
        for probe in ("startupProbe", "readinessProbe"):
            spec = container.get(probe)
            expect(spec is not None, f"{name}: no {probe}")
            expect(spec.get("grpc", {}).get("port") == ports["grpc"],
                   f"{name}: {probe} is not a gRPC probe on the grpc port {ports['grpc']}: {spec}")
        # Health follows the dependencies: a gRPC liveness probe would restart healthy pods.
        expect("grpc" not in (container.get("livenessProbe") or {}),
               f"{name}: a gRPC liveness probe restarts healthy pods when a dependency blips")
        startup = container["startupProbe"]
        budget_ms = startup["periodSeconds"] * startup["failureThreshold"] * 1000
        startup_timeout = int(config_data(objects, component(d))["OKEY_SERVER__STARTUP_TIMEOUT_MS"])
        expect(budget_ms > startup_timeout,
               f"{name}: the startup probe gives up after {budget_ms} ms, before the service's "
               f"own startup timeout of {startup_timeout} ms")


def check_disruption_budgets(objects, values):
    for d in of_kind(objects, "Deployment"):
        labels = d["spec"]["template"]["metadata"]["labels"]
        pdbs = [p for p in of_kind(objects, "PodDisruptionBudget")
                if selects(p["spec"]["selector"], labels)]
        expect(len(pdbs) == 1, f"{d['metadata']['name']}: {len(pdbs)} PodDisruptionBudgets select it")
        spec = pdbs[0]["spec"]
        expect("maxUnavailable" in spec and spec["maxUnavailable"] not in (0, "0%"),
               f"{d['metadata']['name']}: the PDB must allow a drain to go on (maxUnavailable > 0)")
        expect(spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow",
               f"{d['metadata']['name']}: unready pods would block a node drain")


def check_network_policies(objects, values):
    policies = of_kind(objects, "NetworkPolicy")
    pods = [(d, d["spec"]["template"]["metadata"]["labels"]) for d in of_kind(objects, "Deployment")]
    pods += [(p, p["metadata"]["labels"]) for p in of_kind(objects, "Pod")]
    for d, labels in pods:
        chosen = [p for p in policies if selects(p["spec"]["podSelector"], labels)]
        expect(len(chosen) == 1, f"{d['metadata']['name']}: {len(chosen)} NetworkPolicies select it")
        spec = chosen[0]["spec"]
        expect(sorted(spec.get("policyTypes", [])) == ["Egress", "Ingress"],
               f"{d['metadata']['name']}: the NetworkPolicy must restrict ingress and egress")
        for rule in spec.get("ingress", []) + spec.get("egress", []):
            expect(rule.get("ports"), f"{d['metadata']['name']}: a NetworkPolicy rule open on every port")
        for rule in spec.get("ingress", []):
            expect(rule.get("from"), f"{d['metadata']['name']}: an ingress rule open to every peer")
    services = values["services"]
    for name in SERVICES:
        spec = named(objects, "NetworkPolicy", f"{RELEASE}-{name}")["spec"]
        peers = [p for rule in spec["ingress"] for p in rule["from"]]
        sources = {p.get("podSelector", {}).get("matchLabels", {}).get("app.kubernetes.io/component")
                   for p in peers}
        for caller, svc in services.items():
            expect((name in svc["calls"]) == (caller in sources),
                   f"{name}: ingress from {caller} must be allowed exactly when it calls {name}")
        expect("test" in sources, f"{name}: the helm test pod is not let in")
        for peer in values["networkPolicy"]["ingressFrom"]:
            expect((peer in peers) == services[name]["public"],
                   f"{name}: the apps' ingress must be let in exactly when the service is public")
        egress_ports = {p["port"] for rule in spec["egress"] for p in rule["ports"]}
        uses = [dep for dep in ("nats", "redis") if services[name][dep]]
        for dep in ["dns", "postgres"] + uses:
            for port in values["networkPolicy"]["egress"][dep]["ports"]:
                expect(port["port"] in egress_ports, f"{name}: no egress to {dep} port {port['port']}")
        for dep in ("nats", "redis"):
            if not services[name][dep]:
                ports = {p["port"] for p in values["networkPolicy"]["egress"][dep]["ports"]}
                expect(not (ports & egress_ports), f"{name} does not use {dep} but may reach it")
        for callee in services[name]["calls"]:
            expect(any(selects(peer.get("podSelector"), {"app.kubernetes.io/name": "okey",
                                                         "app.kubernetes.io/instance": RELEASE,
                                                         "app.kubernetes.io/component": callee})
                       for rule in spec["egress"] for peer in rule.get("to", [])),
                   f"{name}: no egress to {callee}, which it calls")


def check_security(objects, values):
    for where, pod in pod_specs(objects):
        psc = pod.get("securityContext") or {}
        expect(pod.get("automountServiceAccountToken") is False, f"{where}: mounts a service account token")
        expect(not pod.get("hostNetwork") and not pod.get("hostPID"), f"{where}: uses the host's namespaces")
        for c in pod.get("containers", []) + pod.get("initContainers", []):
            sc = c.get("securityContext") or {}
            run_as_non_root = sc.get("runAsNonRoot", psc.get("runAsNonRoot"))
            user = sc.get("runAsUser", psc.get("runAsUser"))
            expect(run_as_non_root is True, f"{where}/{c['name']}: runAsNonRoot is not set")
            expect(user is not None and user != 0, f"{where}/{c['name']}: runs as user {user}")
            expect(sc.get("readOnlyRootFilesystem") is True, f"{where}/{c['name']}: writable root filesystem")
            expect(sc.get("allowPrivilegeEscalation") is False, f"{where}/{c['name']}: may escalate privileges")
            expect(sc.get("capabilities", {}).get("drop") == ["ALL"], f"{where}/{c['name']}: capabilities not all dropped")
            expect(not sc.get("capabilities", {}).get("add"), f"{where}/{c['name']}: adds capabilities")
            expect(not sc.get("privileged"), f"{where}/{c['name']}: privileged")
            seccomp = sc.get("seccompProfile", psc.get("seccompProfile")) or {}
            expect(seccomp.get("type") == "RuntimeDefault", f"{where}/{c['name']}: seccomp is not RuntimeDefault")
            expect(c.get("resources", {}).get("requests") and c["resources"].get("limits", {}).get("memory"),
                   f"{where}/{c['name']}: no resource requests or memory limit")
    accounts = {a["metadata"]["name"]: a for a in of_kind(objects, "ServiceAccount")}
    for d in of_kind(objects, "Deployment"):
        sa = d["spec"]["template"]["spec"].get("serviceAccountName")
        expect(sa in accounts, f"{d['metadata']['name']}: its ServiceAccount {sa} is not in the chart")
        expect(accounts[sa].get("automountServiceAccountToken") is False, f"ServiceAccount {sa} mounts a token")


def check_rollout(objects, values):
    for d in service_deployments(objects):
        name, spec = d["metadata"]["name"], d["spec"]
        pod = spec["template"]["spec"]
        (container,) = pod["containers"]
        data = config_data(objects, component(d))
        grace_ms = int(data["OKEY_SERVER__GRACE_PERIOD_MS"])
        sleep_s = container.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds", 0)
        expect(pod["terminationGracePeriodSeconds"] > stop_budget_secs(sleep_s, grace_ms),
               f"{name}: terminationGracePeriodSeconds {pod['terminationGracePeriodSeconds']} is not "
               f"longer than the preStop sleep ({sleep_s} s) plus the drain ({grace_ms} ms) plus "
               f"the telemetry flush ({flush_at_exit_secs()} s)")
        expect(spec["strategy"]["rollingUpdate"]["maxUnavailable"] in (0, "0%"),
               f"{name}: a rollout may take serving pods away before new ones are ready")
        keys = {c["topologyKey"] for c in pod.get("topologySpreadConstraints", [])}
        expect({"topology.kubernetes.io/zone", "kubernetes.io/hostname"} <= keys,
               f"{name}: not spread across zones and nodes: {keys}")
        for c in pod["topologySpreadConstraints"]:
            expect(selects(c["labelSelector"], spec["template"]["metadata"]["labels"]),
                   f"{name}: a topology spread constraint does not select its own pods")
        expect(pod.get("enableServiceLinks") is False, f"{name}: service links would inject OKEY_* variables")
        annotations = spec["template"]["metadata"].get("annotations", {})
        expect(re.fullmatch(r"[0-9a-f]{64}", annotations.get("checksum/config", "")) is not None,
               f"{name}: no checksum/config annotation")
        hpa = [h for h in of_kind(objects, "HorizontalPodAutoscaler")
               if h["spec"]["scaleTargetRef"]["name"] == name]
        autoscaled = values["services"][component(d)]["autoscaling"]["enabled"]
        expect(len(hpa) == (1 if autoscaled else 0), f"{name}: {len(hpa)} autoscalers, autoscaling={autoscaled}")
        if hpa:
            expect("replicas" not in spec, f"{name}: sets replicas although an autoscaler owns them")
            expect(hpa[0]["spec"]["scaleTargetRef"]["kind"] == "Deployment", f"{name}: autoscaler target kind")
        else:
            expect(spec.get("replicas", 1) >= 2 or values["services"][component(d)]["replicas"] == spec.get("replicas"),
                   f"{name}: replicas")
    if values["services"]["table"]["autoscaling"]["enabled"] is False:
        return
    expect(any(h["spec"]["scaleTargetRef"]["name"] == f"{RELEASE}-table"
               for h in of_kind(objects, "HorizontalPodAutoscaler")), "table has no autoscaler")


def check_migrations_are_not_hooks(objects, values):
    # The services migrate at start under an advisory lock; a hook (or a Job) would deadlock
    # `helm upgrade --wait` (post-install) or run before its dependencies exist (Argo CD pre-sync).
    for o in objects:
        hook = (o["metadata"].get("annotations") or {}).get("helm.sh/hook")
        if hook is not None:
            expect(hook == "test" and o["kind"] == "Pod", f"{o['kind']} {o['metadata']['name']}: hook {hook}")
    expect(not of_kind(objects, "Job"), "a Job in the chart: migrations run at start, under a lock")
    for name in SERVICES:
        expect(config_data(objects, name).get("OKEY_DATABASE__CREATE_IF_MISSING") == "false",
               f"{name}: creates its database (the operator's job in production)")


def check_helm_test(objects, values):
    tests = [p for p in of_kind(objects, "Pod")
             if (p["metadata"].get("annotations") or {}).get("helm.sh/hook") == "test"]
    expect(len(tests) == 1, f"{len(tests)} helm test pods")
    args = [a for c in tests[0]["spec"]["containers"] for a in c.get("args", [])]
    for svc in of_kind(objects, "Service"):
        if svc["metadata"]["name"].removeprefix(f"{RELEASE}-") not in SERVICES:
            continue
        port = next(p["port"] for p in svc["spec"]["ports"] if p["name"] == "grpc")
        expect(f"-addr={svc['metadata']['name']}:{port}" in args,
               f"the helm test pod does not check {svc['metadata']['name']}:{port}")
    expect(tests[0]["spec"].get("restartPolicy") == "Never", "the helm test pod restarts")


def check_services(objects, values):
    for d in service_deployments(objects):
        labels = d["spec"]["template"]["metadata"]["labels"]
        svcs = [s for s in of_kind(objects, "Service") if selects({"matchLabels": s["spec"]["selector"]}, labels)]
        expect(len(svcs) == 1, f"{d['metadata']['name']}: {len(svcs)} Services select it")
        expect(svcs[0]["spec"]["ports"][0]["targetPort"] == "grpc", f"{d['metadata']['name']}: Service target port")


def env_of(deployment: dict) -> dict[str, dict]:
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e for e in container.get("env", [])}


def operator_env(values: dict, service: str) -> set[str]:
    """The variables the operator adds to a service (extraEnv, services.<name>.extraEnv): any
    name in any form (a value, a ConfigMap's key), so not the chart's own to hold to its rules.
    The chart refuses one it gives from a Secret itself."""
    own = values["services"][service].get("extraEnv") or []
    return {e["name"] for e in (values.get("extraEnv") or []) + own}


def chart_env_of(deployment: dict, values: dict) -> dict[str, dict]:
    """The chart's own variables of a service's container: its env without the operator's."""
    extra = operator_env(values, component(deployment))
    return {name: e for name, e in env_of(deployment).items() if name not in extra}


def check_secrets(objects, values):
    settings, secret = rust_settings()
    expect(not of_kind(objects, "Secret"), "the chart renders a Secret: secrets are the operator's")
    for d in service_deployments(objects):
        name, svc = d["metadata"]["name"], values["services"][component(d)]
        env = chart_env_of(d, values)
        for var, entry in env.items():
            expect("value" not in entry, f"{name}: {var} has an inline value; settings go in the ConfigMap")
            ref = entry.get("valueFrom", {}).get("secretKeyRef")
            expect(ref and ref.get("name") and ref.get("key"), f"{name}: {var} is not from a Secret")
        data = config_data(objects, component(d))
        for setting in secret:
            expect(env_name(setting) not in data, f"{name}: secret setting {setting} in its ConfigMap")
        for var, value in data.items():
            expect(not CREDENTIAL.search(value), f"{name}: {var} in the ConfigMap looks like a credential")
        needed = {"database.url"} | ({"redis.url"} if svc["redis"] else set())
        if component(d) == "accounts":
            needed.add("tokens.signing_keys_pem")
        for setting in needed:
            expect(env_name(setting) in env, f"{name}: {setting} is not given from a Secret")
        for dependency in ("nats", "redis"):
            if not svc[dependency]:
                given = [var for var in env if var.startswith(f"OKEY_{dependency.upper()}__")]
                expect(not given, f"{name} does not use {dependency} but gets {given} from a Secret")
    # Every secret setting the services read is given to some service from a Secret.
    given = {var for d in service_deployments(objects) for var in chart_env_of(d, values)}
    for setting in secret:
        expect(env_name(setting) in given, f"secret setting {setting} is given to no service")
    for o in objects:
        text = json.dumps({k: v for k, v in o.items() if k != "_template"})
        expect(not CREDENTIAL.search(text), f"{o['kind']} {o['metadata']['name']}: a credential is inlined")


def helper_yaml(name: str):
    """The YAML a define of templates/_helpers.tpl holds (one without template actions)."""
    text = (CHART / "templates" / "_helpers.tpl").read_text()
    found = re.search(r'\{\{- define "' + re.escape(name) + r'" -\}\}\n(.*?)\n\{\{- end -\}\}', text, re.S)
    expect(found is not None, f"templates/_helpers.tpl: define {name} not found")
    return yaml.safe_load(found.group(1))


def check_settings_coverage(objects, values):
    """Every OKEY_ setting the Rust sources read has a value path in the chart, and the chart sets
    no setting the services do not know (they refuse to start on an unknown one)."""
    settings, secret = rust_settings()
    known = set(settings) | secret
    for name in rust_env_names():
        section, key = name.removeprefix("OKEY_").split("__", 1)
        expect(f"{section.lower()}.{key.lower()}" in known,
               f"{name} is written in the Rust sources but is no setting of settings.rs")
    defaults = merged_values(None)
    config_paths = {f"{s}.{k}" for s, keys in chart_values()["config"].items() for k in keys}
    secret_paths = {f"{s}.{k}" for s, keys in defaults["secrets"].items() for k in keys}
    for svc in defaults["services"].values():
        secret_paths |= {f"{s}.{k}" for s, keys in svc.get("secrets", {}).items() for k in keys}
    problems: list[str] = []

    def need(condition: bool, message: str) -> None:
        if not condition:
            problems.append(message)

    definitions = json.loads((CHART / "values.schema.json").read_text())["definitions"]
    schema = definitions["settings"]["properties"]
    # Any setting may come from a Secret, and no other name: a typo under secrets is refused.
    secret_schema = {f"{section}.{key}" for section, spec in definitions["secrets"]["properties"].items()
                     for key in spec["properties"]}
    need(secret_schema == known, "values.schema.json's secrets list is not the services' settings: "
         f"missing {sorted(known - secret_schema)}, unknown {sorted(secret_schema - known)}")
    # The list the chart checks an extraEnv OKEY_<SECTION>__<KEY> against.
    names = helper_yaml("okey.settingNames")
    listed = {f"{section}.{key}" for section, keys in names.items() for key in keys}
    need(listed == known, "templates/_helpers.tpl okey.settingNames is not the services' settings: "
         f"missing {sorted(known - listed)}, unknown {sorted(listed - known)}")
    for setting in sorted(known):
        section, key = setting.split(".", 1)
        if setting in secret:
            need(setting in secret_paths, f"secret setting {setting} ({env_name(setting)}) has no "
                   f"value path secrets.{setting} or services.<name>.secrets.{setting}")
            need(key not in schema.get(section, {}).get("properties", {}),
                   f"the schema lets secret setting {setting} be set in clear under config")
            continue
        if setting in CHART_MANAGED:
            continue
        if setting in secret_paths:
            # Not a Secret<> in Rust but sensitive enough to come from a Secret (hashed credentials).
            need(setting not in config_paths, f"{setting} has two value paths: config and secrets")
            continue
        need(setting in config_paths, f"setting {setting} ({env_name(setting)}) has no value path "
               f"config.{setting} in values.yaml")
        prop = schema.get(section, {}).get("properties", {}).get(key)
        need(prop is not None, f"values.schema.json has no config.{setting}")
        default = settings[setting]
        want = "boolean" if isinstance(default, bool) else "integer" if isinstance(default, int) else "string"
        types = (prop or {}).get("type") or ["string"]
        need(prop is None or want in types,
             f"values.schema.json: config.{setting} is {types}, the service reads a {want}")
    for setting in config_paths | secret_paths:
        need(setting in known, f"values.yaml sets {setting}, which the services do not read "
               f"(they refuse to start on an unknown setting)")
    for name in SERVICES:
        data = config_data(objects, name)
        for var in data:
            section, key = var.removeprefix("OKEY_").split("__", 1)
            need(f"{section.lower()}.{key.lower()}" in known, f"{name}: ConfigMap sets unknown {var}")
    expect(not problems, "; ".join(problems))


def check_monitors(objects, values):
    m = values["metrics"]
    monitors = [o for o in objects if o["kind"] in CUSTOM_KINDS]
    expect(len(of_kind(objects, "ServiceMonitor")) == int(m["serviceMonitor"]["enabled"]), "ServiceMonitor count")
    expect(len(of_kind(objects, "PodMonitor")) == int(m["podMonitor"]["enabled"]), "PodMonitor count")
    if not m["collector"]["enabled"]:
        expect(not monitors, "monitors without the collector")
        return
    collector = named(objects, "Deployment", f"{RELEASE}-otel-collector")
    config = yaml.safe_load(named(objects, "ConfigMap", f"{RELEASE}-otel-collector")["data"]["collector.yaml"])
    for pipeline, parts in config["service"]["pipelines"].items():
        for kind in ("receivers", "processors", "exporters"):
            for part in parts.get(kind, []):
                expect(part in config.get(kind, {}), f"collector pipeline {pipeline}: {kind} {part} is not defined")
    expect("prometheus" in config["service"]["pipelines"]["metrics"]["exporters"], "the collector serves no metrics")
    pod_labels = collector["spec"]["template"]["metadata"]["labels"]
    ports = {p["name"] for c in collector["spec"]["template"]["spec"]["containers"] for p in c["ports"]}
    for mon in monitors:
        expect(mon["apiVersion"] == "monitoring.coreos.com/v1", f"{mon['kind']}: apiVersion")
        endpoints = mon["spec"].get("endpoints") or mon["spec"].get("podMetricsEndpoints")
        expect(endpoints and all(e["port"] in ports for e in endpoints), f"{mon['kind']}: endpoint port")
        # The collector's exporter sets job and instance per service; without honorLabels
        # Prometheus renames them exported_job and exported_instance.
        expect(all(e.get("honorLabels") is True for e in endpoints),
               f"{mon['kind']}: honorLabels is not true: the services' job and instance would be lost")
        if mon["kind"] == "PodMonitor":
            expect(selects(mon["spec"]["selector"], pod_labels), "the PodMonitor does not select the collector")
        else:
            svc = named(objects, "Service", f"{RELEASE}-otel-collector")
            expect(selects(mon["spec"]["selector"], svc["metadata"]["labels"]),
                   "the ServiceMonitor does not select the collector's Service")
    for name in SERVICES:
        endpoint = otlp_endpoint_set(values, name) or f"http://{RELEASE}-otel-collector:4317"
        expect(config_data(objects, name)["OKEY_TELEMETRY__OTLP_ENDPOINT"] == endpoint,
               f"{name}: not pointed at the collector or at its own endpoint {endpoint}")


def otlp_endpoint_set(values: dict, service: str) -> str:
    """A service's OTLP endpoint as the values set it: services.<name>.config over config."""
    own = (values["services"][service].get("config") or {}).get("telemetry") or {}
    if "otlp_endpoint" in own:
        return own["otlp_endpoint"] or ""
    return values["config"]["telemetry"].get("otlp_endpoint") or ""


def check_labels(objects, values):
    """Every label value is one the API server takes (image.tag may be up to 128 characters), and
    no pod template carries a label that changes with the chart's own release (helm.sh/chart):
    a chart release alone would then roll every pod."""
    for o in objects:
        name = f"{o['kind']} {o['metadata']['name']}"
        template = (o.get("spec") or {}).get("template")
        sets = [(name, o["metadata"].get("labels") or {})]
        if template:
            sets.append((f"{name} pod template", template["metadata"].get("labels") or {}))
            expect("helm.sh/chart" not in template["metadata"].get("labels", {}),
                   f"{name}: helm.sh/chart in the pod template rolls every pod on a chart release")
        for where, labels in sets:
            for key, value in labels.items():
                expect(isinstance(value, str) and LABEL_VALUE.fullmatch(value) is not None,
                       f"{where}: label {key}={value!r} is no label value (at most 63 characters, "
                       f"alphanumeric at both ends)")


RENDER_CHECKS = [check_probes, check_disruption_budgets, check_network_policies, check_security,
                 check_labels, check_rollout, check_migrations_are_not_hooks, check_helm_test,
                 check_services, check_secrets, check_settings_coverage, check_monitors]


# ---------------------------------------------------------------------------------------------
# Broken renderings: each assertion must fail on its own kind of breakage.


def first_service(objects):
    return next(d for d in service_deployments(objects) if component(d) == "table")


def container_of(d):
    return d["spec"]["template"]["spec"]["containers"][0]


def _drop_readiness(objects):
    del container_of(first_service(objects))["readinessProbe"]


def _probe_on_wrong_port(objects):
    container_of(first_service(objects))["startupProbe"]["grpc"]["port"] = 8080


def _grpc_liveness(objects):
    container_of(first_service(objects))["livenessProbe"] = {"grpc": {"port": 50053}}


def _drop_pdb(objects):
    objects.remove(named(objects, "PodDisruptionBudget", f"{RELEASE}-table"))


def _drop_network_policy(objects):
    objects.remove(named(objects, "NetworkPolicy", f"{RELEASE}-scoring"))


def _open_ingress(objects):
    named(objects, "NetworkPolicy", f"{RELEASE}-table")["spec"]["ingress"].append({"ports": [{"port": "grpc"}]})


def _root_user(objects):
    container_of(first_service(objects))["securityContext"]["runAsUser"] = 0


def _writable_root(objects):
    container_of(first_service(objects))["securityContext"]["readOnlyRootFilesystem"] = False


def _inline_secret(objects):
    container_of(first_service(objects))["env"].append(
        {"name": "OKEY_DATABASE__URL", "value": "postgres://okey:hunter2@db:5432/okey_table"})


def _secret_in_configmap(objects):
    config_data(objects, "accounts")["OKEY_REDIS__URL"] = "redis://:hunter2@redis:6379/0"


def _unreferenced_secret(objects):
    env = container_of(first_service(objects))["env"]
    env[:] = [e for e in env if e["name"] != "OKEY_REDIS__URL"]


def _short_grace(objects):
    first_service(objects)["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = 10


def _migration_hook(objects):
    d = first_service(objects)
    d["metadata"].setdefault("annotations", {})["helm.sh/hook"] = "post-install"


def _untested_service(objects):
    test = next(p for p in of_kind(objects, "Pod"))
    test["spec"]["containers"] = test["spec"]["containers"][1:]


def _stale_setting(objects):
    config_data(objects, "table")["OKEY_LIVE__BOT_PACE"] = "10"


def _chart_label_on_pods(objects):
    first_service(objects)["spec"]["template"]["metadata"]["labels"]["helm.sh/chart"] = "okey-0.3.6"


def _long_version_label(objects):
    first_service(objects)["metadata"]["labels"]["app.kubernetes.io/version"] = "3f2a9c1" * 10


def _nats_token_in_configmap(objects):
    config_data(objects, "table")["OKEY_NATS__URL"] = "nats://s3cr3t@nats:4222"


BREAKAGES = [
    (_drop_readiness, check_probes), (_probe_on_wrong_port, check_probes), (_grpc_liveness, check_probes),
    (_drop_pdb, check_disruption_budgets), (_drop_network_policy, check_network_policies),
    (_open_ingress, check_network_policies), (_root_user, check_security), (_writable_root, check_security),
    (_inline_secret, check_secrets), (_secret_in_configmap, check_secrets), (_unreferenced_secret, check_secrets),
    (_short_grace, check_rollout), (_migration_hook, check_migrations_are_not_hooks),
    (_untested_service, check_helm_test), (_stale_setting, check_settings_coverage),
    (_chart_label_on_pods, check_labels), (_long_version_label, check_labels),
    (_nats_token_in_configmap, check_secrets),
]


# ---------------------------------------------------------------------------------------------
# The schema and the chart's own refusals


BAD_VALUES = {
    "a port of the wrong type": {"services": {"table": {"port": "fifty"}}},
    "an unknown setting": {"config": {"server": {"prot": 1}}},
    "a setting of the wrong type": {"config": {"live": {"bot_pace_ms": "fast"}}},
    "a secret in clear under config": {"config": {"database": {"url": "postgres://u:p@db/okey"}}},
    "a secret URL in clear instead of a Secret reference": {"secrets": {"redis": {"url": "redis://:pw@redis:6379"}}},
    "a Secret reference with an empty name": {"secrets": {"redis": {"url": {"name": ""}}}},
    "an unknown top-level key": {"replicaCount": 3},
    "an unknown service key": {"services": {"scoring": {"replica": 2}}},
    "a log format that does not exist": {"config": {"telemetry": {"log_format": "xml"}}},
    "a negative replica count": {"services": {"accounts": {"replicas": -1}}},
    "events kept shorter than the duplicate window": {"config": {"nats": {"events_max_age_secs": 60}}},
    "a negative guest limit": {"config": {"sign_in": {"guests_per_address": -1}}},
    "a Secret for a setting that does not exist": {"services": {"table": {"secrets": {"database": {"ulr": {"name": "x", "key": "url"}}}}}},
    # The NATS client is built without websockets, and takes one server.
    "a websocket NATS URL": {"config": {"nats": {"url": "ws://nats:8080"}}},
    "a secure websocket NATS URL": {"services": {"table": {"config": {"nats": {"url": "wss://nats:443"}}}}},
    "a list of NATS URLs": {"config": {"nats": {"url": "nats://nats-0:4222,nats://nats-1:4222"}}},
    # Credentials in config.nats.url would stand in a ConfigMap: they go through secrets.nats.url.
    "a NATS URL with a user and password": {"config": {"nats": {"url": "nats://okey:hunter2@nats:4222"}}},
    "a NATS URL with a token": {"services": {"table": {"config": {"nats": {"url": "tls://s3cr3t@nats:4222"}}}}},
    # The services take http(s) URLs only (and refuse another at start, or fail every call).
    "an OTLP endpoint without a scheme": {"config": {"telemetry": {"otlp_endpoint": "otel.observability.svc:4317"}}},
    "an OTLP endpoint of another scheme": {"services": {"table": {"config": {"telemetry": {"otlp_endpoint": "grpc://otel:4317"}}}}},
    "an OTLP endpoint without a host": {"config": {"telemetry": {"otlp_endpoint": "http://:4317"}}},
    "a keys URL without a scheme": {"config": {"tokens": {"keys_url": "okey-accounts:50051"}}},
    "an empty table URL": {"services": {"matchmaking": {"config": {"matchmaking": {"table_url": ""}}}}},
    "a table URL without a scheme": {"config": {"matchmaking": {"table_url": "okey-table:50053"}}},
    "a scoring URL of another scheme": {"config": {"matchmaking": {"scoring_url": "grpc://okey-scoring:50054"}}},
    "an accounts URL without a scheme": {"config": {"service_client": {"accounts_url": "okey-accounts:50051"}}},
    # image.tag: a Docker tag, or the number --set makes of an all-digit one.
    "an image tag that is no Docker tag": {"image": {"tag": "feature/x"}},
    "an image tag longer than Docker's 128 characters": {"image": {"tag": "a" * 129}},
    "a negative image tag": {"image": {"tag": -1}},
    # The services parse server.host as an IP address.
    "a host name to listen on": {"config": {"server": {"host": "localhost"}}},
    "a listen address with a port": {"config": {"server": {"host": "0.0.0.0:50051"}}},
    "a bracketed IPv6 listen address": {"services": {"scoring": {"config": {"server": {"host": "[::]"}}}}},
    # A budget of 0 blocks every node drain; a surge of 0 (with maxUnavailable 0) every rollout.
    "a disruption budget of 0 pods": {"services": {"table": {"podDisruptionBudget": {"maxUnavailable": 0}}}},
    "a disruption budget of 0%": {"services": {"accounts": {"podDisruptionBudget": {"maxUnavailable": "0%"}}}},
    "a disruption budget that is no number": {"services": {"scoring": {"podDisruptionBudget": {"maxUnavailable": "one"}}}},
    "a rollout surge of 0": {"updateStrategy": {"maxSurge": 0}},
    # podLabels would change the labels that select each service's pods.
    "podLabels setting the component label": {"podLabels": {"app.kubernetes.io/component": "table"}},
    "podLabels setting the instance label": {"podLabels": {"app.kubernetes.io/instance": "other"}},
    "podLabels setting the name label": {"podLabels": {"app.kubernetes.io/name": "other"}},
    # extraEnv / extraVolumes / extraVolumeMounts: lists of EnvVar, Volume, VolumeMount objects.
    "extraEnv as a map": {"extraEnv": {"SSL_CERT_FILE": "/etc/okey/ca/ca.pem"}},
    "a service's extraEnv as a string": {"services": {"table": {"extraEnv": "SSL_CERT_FILE=/etc/okey/ca/ca.pem"}}},
    "an extraEnv entry without a name": {"extraEnv": [{"value": "/etc/okey/ca/ca.pem"}]},
    "an extraEnv entry with an empty name": {"services": {"scoring": {"extraEnv": [{"name": "", "value": "1"}]}}},
    "an extraEnv value that is no string": {"extraEnv": [{"name": "RUST_BACKTRACE", "value": 1}]},
    "an extraEnv entry with value and valueFrom": {"extraEnv": [
        {"name": "SSL_CERT_FILE", "value": "/x", "valueFrom": {"configMapKeyRef": {"name": "ca", "key": "path"}}}]},
    "an extraEnv entry with a misspelt field": {"extraEnv": [{"name": "SSL_CERT_FILE", "Value": "/x"}]},
    "extraVolumes as a map": {"extraVolumes": {"ca": {"secret": {"secretName": "okey-ca"}}}},
    "a volume without a name": {"extraVolumes": [{"secret": {"secretName": "okey-ca"}}]},
    "a volume without a source": {"services": {"table": {"extraVolumes": [{"name": "ca"}]}}},
    "a volume name that is no DNS label": {"extraVolumes": [{"name": "CA_certs", "secret": {"secretName": "okey-ca"}}]},
    "extraVolumeMounts as one object": {"services": {"table": {"extraVolumeMounts": {"name": "ca", "mountPath": "/etc/okey/ca"}}}},
    "a mount without a mountPath": {"extraVolumeMounts": [{"name": "ca"}]},
    "a mount without a name": {"services": {"scoring": {"extraVolumeMounts": [{"mountPath": "/etc/okey/ca"}]}}},
    "a relative mountPath": {"extraVolumeMounts": [{"name": "ca", "mountPath": "etc/okey/ca"}]},
    "a mount with a misspelt field": {"extraVolumeMounts": [{"name": "ca", "mountPath": "/etc/okey/ca", "readonly": True}]},
}

# Values the schema must take (each next to a refusal above, so a tightening cannot overshoot).
GOOD_VALUES = {
    "a tls:// NATS URL": {"config": {"nats": {"url": "tls://nats.nats.svc:4222"}}},
    "a NATS URL naming the release": {"config": {"nats": {"url": 'nats://{{ include "okey.fullname" . }}-nats:4222'}}},
    "an https OTLP endpoint, a service's own": {"config": {"telemetry": {"otlp_endpoint": "https://otel.example.com"}},
                                                "services": {"table": {"config": {"telemetry": {"otlp_endpoint": "http://[fd00::1]:4317"}}}}},
    "empty keys, scoring and accounts URLs": {"config": {"tokens": {"keys_url": ""},
                                                         "matchmaking": {"scoring_url": ""},
                                                         "service_client": {"accounts_url": ""}}},
    "URLs naming the release": {"config": {"matchmaking": {"table_url": 'https://{{ include "okey.fullname" . }}-table:443'},
                                           "tokens": {"keys_url": 'https://{{ include "okey.fullname" . }}-keys'}}},
    "an all-digit image tag as --set gives it": helm.parse_set_string("image.tag=1234567"),
    "an image tag of 128 characters": {"image": {"tag": "v" + "1" * 127}},
    "an IPv6 listen address": {"config": {"server": {"host": "::"}}},
    "an IPv4 loopback listen address": {"services": {"table": {"config": {"server": {"host": "127.0.0.1"}}}}},
    "a disruption budget of 25%": {"services": {"table": {"podDisruptionBudget": {"maxUnavailable": "25%"}}}},
    "a disruption budget of 2 pods": {"services": {"table": {"podDisruptionBudget": {"maxUnavailable": 2}}}},
    "a pod label of your own": {"podLabels": {"team": "games"}},
    "global and per-service extraEnv, extraVolumes and extraVolumeMounts": EXTRAS,
    "an extraEnv entry from a Secret, one with an empty value": {"extraEnv": [
        {"name": "OTEL_RESOURCE_ATTRIBUTES", "valueFrom": {"secretKeyRef": {"name": "okey-otel", "key": "attributes"}}},
        {"name": "RUST_BACKTRACE", "value": ""}]},
    "ephemeral-storage requests and limits": {
        "services": {"table": {"resources": {"requests": {"cpu": "500m", "memory": "256Mi", "ephemeral-storage": "1Gi"},
                                             "limits": {"memory": "1Gi", "ephemeral-storage": "2Gi"}}}},
        "metrics": {"collector": {"resources": {"requests": {"ephemeral-storage": "256Mi"},
                                                "limits": {"memory": "512Mi", "ephemeral-storage": "1Gi"}}}}},
}


def check_schema_refuses_bad_values():
    print("     (Helm may warn below about a table overwritten by a string, or a list given as a"
          " table: bad values given on purpose)", flush=True)
    with helm.Chart.load(CHART) as chart:
        for what, values in BAD_VALUES.items():
            try:
                chart.validate_schema(values)
            except helm.HelmValuesError:
                pass
            else:
                raise CheckFailed(f"the schema accepts {what}: {values}")
        for what, values in GOOD_VALUES.items():
            try:
                chart.validate_schema(values)
            except helm.HelmValuesError as e:
                raise CheckFailed(f"the schema refuses {what}: {e}") from None
    # What the schema takes must render.
    storage = render(GOOD_VALUES["ephemeral-storage requests and limits"])
    expect(container_of(first_service(storage))["resources"]["limits"].get("ephemeral-storage") == "2Gi",
           "ephemeral-storage does not reach the table's container")
    report = helm.lint(CHART, BAD_VALUES["a port of the wrong type"], strict=True)
    expect(any(m["severity"] >= 3 for m in report["messages"]) or report["errors"],
           f"helm lint accepts a port of the wrong type: {report}")


def check_template_refusals():
    refused = {
        "a grace period longer than the pod's": {"config": {"server": {"grace_period_ms": 60000}}},
        "one service's grace period longer than the pod's": {
            "services": {"table": {"config": {"server": {"grace_period_ms": 60000}}}}},
        "a null grace period (the built-in 10 s) longer than a short pod's": {
            "config": {"server": {"grace_period_ms": None}}, "preStopSleepSeconds": 5,
            "terminationGracePeriodSeconds": 15},
        "monitors without the collector": {"metrics": {"serviceMonitor": {"enabled": True}}},
        "an autoscaler with min above max": {"services": {"table": {"autoscaling": {"minReplicas": 20}}}},
        "a mount of a volume no pod has": {"extraVolumeMounts": [{"name": "ca", "mountPath": "/etc/okey/ca"}]},
        "a mount of a volume only another service has": {
            "extraVolumeMounts": [{"name": "ca", "mountPath": "/etc/okey/ca"}],
            "services": {"table": {"extraVolumes": [{"name": "ca", "secret": {"secretName": "okey-ca"}}]}}},
        "two global volumes of one name": {"extraVolumes": [{"name": "ca", "secret": {"secretName": "a"}},
                                                            {"name": "ca", "secret": {"secretName": "b"}}]},
        "two mounts at one path in a service's list": {
            "extraVolumes": [{"name": "ca", "secret": {"secretName": "okey-ca"}}],
            "services": {"scoring": {"extraVolumeMounts": [{"name": "ca", "mountPath": "/etc/okey/ca"},
                                                           {"name": "ca", "mountPath": "/etc/okey/ca"}]}}},
        "one variable twice in a service's extraEnv": {
            "services": {"table": {"extraEnv": [{"name": "SSL_CERT_FILE", "value": "/a"},
                                                {"name": "SSL_CERT_FILE", "value": "/b"}]}}},
        "an extraEnv variable the chart gives from a Secret": {
            "extraEnv": [{"name": "OKEY_DATABASE__URL", "value": "postgres://db.internal:5432/okey"}]},
        "a service's extraEnv variable the chart gives it from a Secret": {
            "services": {"accounts": {"extraEnv": [{"name": "OKEY_TOKENS__SIGNING_KEYS_PEM",
                                                    "valueFrom": {"configMapKeyRef": {"name": "keys", "key": "pem"}}}]}}},
        # Names no service reads: every pod would crash-loop on it.
        "an extraEnv setting no service reads": {"extraEnv": [{"name": "OKEY_LIVE__BOT_PACE", "value": "10"}]},
        "a service's extraEnv section no service reads": {
            "services": {"scoring": {"extraEnv": [{"name": "OKEY_SERVR__HOST", "value": "::"}]}}},
        "an extraEnv setting with an empty key": {"extraEnv": [{"name": "OKEY_RATING__", "value": "1"}]},
        # live.gone_ms below live.connected_ms, which the table service refuses at start.
        "live.gone_ms below live.connected_ms": {"config": {"live": {"gone_ms": 1000, "connected_ms": 2000}}},
        "one service's live.gone_ms below the common connected_ms": {
            "services": {"table": {"config": {"live": {"gone_ms": 29999}}}}},
        # A startup timeout the startup probe does not outlast (2 s x 60 = 120000 ms by default).
        "a startup timeout as long as the startup probe": {"config": {"server": {"startup_timeout_ms": 120000}}},
        "one service's startup timeout longer than the startup probe": {
            "services": {"accounts": {"config": {"server": {"startup_timeout_ms": 300000}}}}},
        "a startup probe shorter than the timeout": {"probes": {"startup": {"periodSeconds": 2, "failureThreshold": 20}}},
    }
    settings, secret = rust_settings()
    # What the chart sets or checks itself, in extraEnv (global, a service's) and under secrets:
    # each refusal names the value that sets it.
    says = {}
    for setting in CHART_GUARDED:
        section, key = setting.split(".")
        var = env_name(setting)
        ref = {"name": "okey-x", "key": "x"}
        cases = {
            f"extraEnv {var}": ("accounts", {"extraEnv": [{"name": var, "value": "1"}]}),
            f"table's extraEnv {var} from a ConfigMap": (
                "table", {"services": {"table": {"extraEnv": [{"name": var, "valueFrom": {"configMapKeyRef": ref}}]}}}),
            f"secrets.{setting}": ("accounts", {"secrets": {section: {key: ref}}}),
            f"services.scoring.secrets.{setting}": ("scoring", {"services": {"scoring": {"secrets": {section: {key: ref}}}}}),
        }
        for what, (service, values) in cases.items():
            refused[what] = values
            says[what] = f"services.{service}.port" if setting == "server.port" else f"config.{setting}"
    # A credential as an extraEnv value, on every service (where the chart gives it from no Secret too).
    credentials = sorted(secret | {"nats.url"})
    for setting in credentials:
        for name in SERVICES:
            refused[f"services.{name}.extraEnv {env_name(setting)} as a literal value"] = {
                "services": {name: {"extraEnv": [{"name": env_name(setting), "value": "x"}]}}}
    refused["a global extraEnv NATS URL as a literal value"] = {
        "extraEnv": [{"name": "OKEY_NATS__URL", "value": "nats://nats:4222"}]}
    for what, values in refused.items():
        try:
            render(values)
        except helm.HelmError as e:
            expect(what not in says or says[what] in str(e), f"the refusal of {what} does not name {says.get(what)}: {e}")
            continue
        raise CheckFailed(f"the chart renders {what}")
    # Each refusal above is the value's fault: its nearest good neighbour renders.
    render({"extraVolumeMounts": [{"name": "ca", "mountPath": "/etc/okey/ca"}],
            "extraVolumes": [{"name": "ca", "secret": {"secretName": "okey-ca"}}]})
    render({"extraEnv": [{"name": "OKEY_TELEMETRY__LOG_FILTER", "value": "debug"},
                         {"name": "OKEY_CONFIG_FILE", "value": "/etc/okey/okey.toml"},
                         {"name": "OKEY_LIVE", "value": "not a setting: no __"}]})
    secret_ref = {"secretKeyRef": {"name": "okey-table-nats", "key": "url"}}
    render({"services": {"table": {"extraEnv": [{"name": "OKEY_NATS__URL", "valueFrom": secret_ref}]},
                         "accounts": {"extraEnv": [{"name": "OKEY_SERVICE_CLIENT__SECRET", "valueFrom": secret_ref}]}}})
    render({"config": {"live": {"gone_ms": 2000, "connected_ms": 2000}, "server": {"startup_timeout_ms": 119999}}})
    # The chart's defaults for a null setting are the services' own (settings.rs).
    period, threshold = 1, settings["server.startup_timeout_ms"] // 1000
    null_timeout = {"config": {"server": {"startup_timeout_ms": None}}}
    for probe_s, renders in ((threshold, False), (threshold + 1, True)):
        values = {**null_timeout, "probes": {"startup": {"periodSeconds": period, "failureThreshold": probe_s}}}
        try:
            render(values)
            rendered = True
        except helm.HelmError:
            rendered = False
        expect(rendered == renders, f"a null startup timeout (the services' {settings['server.startup_timeout_ms']} ms) "
               f"and a startup probe of {probe_s} s: {'refused' if renders else 'rendered'}")
    gone, connected = settings["live.gone_ms"], settings["live.connected_ms"]
    for live, renders in (({"gone_ms": None, "connected_ms": gone + 1}, False),
                          ({"gone_ms": None, "connected_ms": gone}, True),
                          ({"gone_ms": connected - 1, "connected_ms": None}, False),
                          ({"gone_ms": connected, "connected_ms": None}, True)):
        try:
            render({"config": {"live": live}})
            rendered = True
        except helm.HelmError:
            rendered = False
        expect(rendered == renders, f"live {live} (null: the services' gone_ms {gone}, connected_ms {connected}): "
               f"{'refused' if renders else 'rendered'}")


def check_grace_counts_the_flush():
    """The chart's grace check rounds the drain up to whole seconds and adds the telemetry flush
    (FLUSH_AT_EXIT, read from the Rust source): at that sum it refuses, one second more renders."""
    drain = {"preStopSleepSeconds": 5, "config": {"server": {"grace_period_ms": 22500}}}
    budget = stop_budget_secs(5, 22500)
    try:
        render({**drain, "terminationGracePeriodSeconds": budget})
    except helm.HelmError:
        pass
    else:
        raise CheckFailed(f"the chart renders terminationGracePeriodSeconds {budget} for a stop that may "
                          f"take {budget} s (5 s sleep, 22.5 s drain, {flush_at_exit_secs()} s flush)")
    longer = {**drain, "terminationGracePeriodSeconds": budget + 1}
    check_rollout(render(longer), merged_values(longer))


def check_egress_follows_the_endpoints():
    """The services can reach what they are pointed at: an OTLP endpoint set explicitly (which
    wins over the chart's collector) through egress.otlp, and networkPolicy.extraEgress (an https
    keys URL's proxy) on every service."""
    extra = {"ports": [{"port": 443, "protocol": "TCP"}], "to": [{"ipBlock": {"cidr": "192.0.2.0/24"}}]}
    values = {"config": {"telemetry": {"otlp_endpoint": "http://otel.observability.svc:4317"}},
              "metrics": {"collector": {"enabled": True}},
              "networkPolicy": {"extraEgress": [extra]}}
    objects = render(values)
    otlp = merged_values(values)["networkPolicy"]["egress"]["otlp"]
    for name in SERVICES:
        env = named(objects, "ConfigMap", f"{RELEASE}-{name}")["data"]
        expect(env["OKEY_TELEMETRY__OTLP_ENDPOINT"] == "http://otel.observability.svc:4317",
               f"{name}: the explicit endpoint does not win over the collector")
        egress = named(objects, "NetworkPolicy", f"{RELEASE}-{name}")["spec"]["egress"]
        expect(any(r["ports"] == otlp["ports"] and r.get("to", []) == otlp["to"] for r in egress),
               f"{name}: no egress to the explicit OTLP endpoint while the collector is on")
        expect(extra in egress, f"{name}: networkPolicy.extraEgress is not in its policy")


def check_egress_follows_each_service_endpoint():
    """A service's own telemetry.otlp_endpoint (services.<name>.config) is the one it sends to,
    over the common one and over the chart's collector, and its NetworkPolicy follows it: the
    egress.otlp rule where its endpoint is set, the collector's rule where it falls back to the
    collector (its own value empty), neither where it sends nowhere."""
    def otlp_rule(egress, otlp):
        return any(r["ports"] == otlp["ports"] and r.get("to", []) == otlp["to"] for r in egress)

    def collector_rule(egress):
        return any(selects(peer.get("podSelector"), {"app.kubernetes.io/name": "okey", "app.kubernetes.io/instance": RELEASE,
                                                     "app.kubernetes.io/component": "otel-collector"})
                   for r in egress for peer in r.get("to", []))

    own = "http://otel.table.svc:4317"
    common = "https://otel.example.com:4317"
    collector = f"http://{RELEASE}-otel-collector:4317"
    cases = [
        ("the collector on, table's own endpoint", {"metrics": {"collector": {"enabled": True}},
                                                    "services": {"table": {"config": {"telemetry": {"otlp_endpoint": own}}}}},
         {"table": own, "accounts": collector, "matchmaking": collector, "scoring": collector}),
        ("the collector off, table's own endpoint", {"services": {"table": {"config": {"telemetry": {"otlp_endpoint": own}}}}},
         {"table": own, "accounts": "", "matchmaking": "", "scoring": ""}),
        ("the collector on, a common endpoint, scoring's empty", {
            "metrics": {"collector": {"enabled": True}}, "config": {"telemetry": {"otlp_endpoint": common}},
            "services": {"scoring": {"config": {"telemetry": {"otlp_endpoint": ""}}}}},
         {"table": common, "accounts": common, "matchmaking": common, "scoring": collector}),
    ]
    for what, values, want in cases:
        objects = render(values)
        merged = merged_values(values)
        otlp = merged["networkPolicy"]["egress"]["otlp"]
        for name in SERVICES:
            sent = config_data(objects, name)["OKEY_TELEMETRY__OTLP_ENDPOINT"]
            expect(sent == want[name], f"{what}: {name} sends OTLP to {sent!r}, want {want[name]!r}")
            egress = named(objects, "NetworkPolicy", f"{RELEASE}-{name}")["spec"]["egress"]
            explicit = want[name] not in ("", collector)
            expect(otlp_rule(egress, otlp) == explicit,
                   f"{what}: {name}'s egress.otlp rule {'missing' if explicit else 'present'} (it sends to {sent!r})")
            expect(collector_rule(egress) == (want[name] == collector),
                   f"{what}: {name}'s rule to the collector {'missing' if want[name] == collector else 'present'}")
        check_network_policies(objects, merged)
        check_monitors(objects, merged)


def check_image_tag_as_a_number():
    """`--set image.tag=<an all-digit commit>` gives a number: the schema takes it and every use
    of the tag (images, the version label, NOTES.txt) writes it as the integer it was."""
    values = helm.parse_set_string("image.tag=1234567")
    expect(values == {"image": {"tag": 1234567}}, f"--set gives {values}: this check lost its case")
    objects = render(values)
    for d in service_deployments(objects):
        image = container_of(d)["image"]
        expect(image == f"okey/{component(d)}:1234567", f"{d['metadata']['name']}: image {image}")
        version = d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/version"]
        expect(version == "1234567", f"{d['metadata']['name']}: version label {version}")
    first = render_manifests(values)["okey/templates/NOTES.txt"].splitlines()[0]
    expect(first.startswith("okey 1234567 "), f"NOTES.txt names the tag as {first}")


def check_version_label_is_bounded():
    """A Docker tag may have 128 characters, a label value 63 ending in a letter or digit: the
    version label is the tag cut to fit, the image keeps the whole tag."""
    tag = "1.2.3-" + "a" * 56 + "-" + "b" * 60  # its 63rd character is "-"
    objects = render({"image": {"tag": tag}})
    check_labels(objects, merged_values({"image": {"tag": tag}}))
    for d in service_deployments(objects):
        expect(container_of(d)["image"].endswith(f":{tag}"), f"{d['metadata']['name']}: the image lost its tag")
        for labels in (d["metadata"]["labels"], d["spec"]["template"]["metadata"]["labels"]):
            expect(labels["app.kubernetes.io/version"] == tag[:62],
                   f"{d['metadata']['name']}: version label {labels['app.kubernetes.io/version']!r}, want {tag[:62]!r}")


def check_pods_roll_with_what_they_run():
    """A chart release alone (a new Chart.yaml version) leaves every pod template as it was, so
    no pod rolls; a new image tag rolls the services' pods and not the collector's."""
    values = {"metrics": {"collector": {"enabled": True}}}

    def templates(objects):
        return {d["metadata"]["name"]: json.dumps(d["spec"]["template"], sort_keys=True)
                for d in of_kind(objects, "Deployment")}
    base = templates(render(values))
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "okey"
        shutil.copytree(CHART, copy)
        chart_yaml = copy / "Chart.yaml"
        chart_yaml.write_text(re.sub(r"^version: .*$", "version: 99.0.0", chart_yaml.read_text(), flags=re.M))
        bumped_objects = render(values, chart_dir=copy)
    expect(any(o["metadata"]["labels"].get("helm.sh/chart") == "okey-99.0.0" for o in bumped_objects),
           "the copy's chart version reached no object: this check lost its case")
    bumped = templates(bumped_objects)
    changed = sorted(name for name in base if bumped.get(name) != base[name])
    expect(not changed, f"a chart version bump alone changes the pod templates of {changed}: every pod rolls")
    tagged = templates(render({**values, "image": {"tag": "3f2a9c1"}}))
    for name in base:
        services = name != f"{RELEASE}-otel-collector"
        expect((tagged[name] != base[name]) == services,
               f"a new image tag {'leaves' if services else 'changes'} the pod template of {name}")


def database_connections(values: dict) -> tuple[int, int]:
    """PostgreSQL connections of every pod at the autoscalers' maximum (replicas without one),
    and with a rolling update's surge on top: each pod's pool (database.max_connections, its
    merged value), the table's outbox pool (PUBLISHER_CONNECTIONS) and a LISTEN connection per
    PgListener::connect in the service's sources."""
    outbox = re.search(r"const PUBLISHER_CONNECTIONS: u32 = (\d+);",
                       (ROOT / "services" / "table" / "src" / "outbox.rs").read_text())
    expect(outbox is not None, "services/table/src/outbox.rs: PUBLISHER_CONNECTIONS not found")
    surge = str(values["updateStrategy"]["maxSurge"])
    steady = during = 0
    for name, svc in values["services"].items():
        listeners = sum(path.read_text().split("#[cfg(test)]")[0].count("PgListener::connect(")
                        for path in (ROOT / "services" / name / "src").rglob("*.rs"))
        own = ((svc.get("config") or {}).get("database") or {}).get("max_connections")
        pool = own if own is not None else values["config"]["database"]["max_connections"]
        per_pod = pool + listeners + (int(outbox.group(1)) if name == "table" else 0)
        pods = svc["autoscaling"]["maxReplicas"] if svc["autoscaling"]["enabled"] else svc["replicas"]
        extra = math.ceil(pods * int(surge[:-1]) / 100) if surge.endswith("%") else int(surge)
        steady += pods * per_pod
        during += (pods + extra) * per_pod
    expect(steady > 0, "no connections counted")
    return steady, during


def check_connection_figures():
    """The connection sums in docs/operations.md ("Scaling", the defaults) and in
    helm/values-production.yaml's comment are what the values and the services' sources add
    up to, and the production surge stays under the max_connections the comment names."""
    guide = " ".join(GUIDE.read_text().split())
    steady, during = database_connections(merged_values(None))
    found = re.search(r"= (\d+), and (\d+) during an upgrade", guide)
    expect(found is not None, "docs/operations.md: the connection sum was not found")
    expect((int(found.group(1)), int(found.group(2))) == (steady, during),
           f"docs/operations.md says {found.group(1)} and {found.group(2)} connections, the defaults make {steady} and {during}")
    lines = [line.strip().lstrip("#").strip() for line in PRODUCTION.read_text().splitlines() if line.strip().startswith("#")]
    comment = " ".join(lines)
    steady, during = database_connections(merged_values(load_values(PRODUCTION)))
    found = re.search(r"max_connections (\d+)\..*?= (\d+), and a rolling update's surge \(.*?\) makes it (\d+)", comment)
    expect(found is not None, "helm/values-production.yaml: the connection sum was not found")
    limit, said_steady, said_during = (int(g) for g in found.groups())
    expect((said_steady, said_during) == (steady, during),
           f"helm/values-production.yaml says {said_steady} and {said_during} connections, its values make {steady} and {during}")
    expect(during < limit, f"helm/values-production.yaml: {during} connections during an upgrade, max_connections {limit}")


# Where the deploy command is written out for people to copy.
TAG_COMMAND_FILES = [ROOT / "README.md", ROOT / "docs" / "operations.md", PRODUCTION, CHART / "values.yaml",
                     CHART / "templates" / "NOTES.txt"]


def check_tag_commands(texts: dict[str, str] | None = None):
    """The documented commands give image.tag with --set-string: --set makes an all-digit commit
    a number."""
    if texts is None:
        texts = {str(path.relative_to(ROOT)): path.read_text() for path in TAG_COMMAND_FILES}
    for where, text in texts.items():
        flat = " ".join(text.replace("\\\n", " ").replace("#", " ").split())
        expect(not re.search(r"--set[ =]image\.tag=", flat), f"{where} gives image.tag with --set, not --set-string")
    expect(any("--set-string image.tag=" in text for text in texts.values()), "no --set-string image.tag= found")


def check_placement_reaches_every_pod():
    """imagePullSecrets, priorityClassName, nodeSelector, tolerations and affinity reach every
    pod of the release: the services', the collector's and the `helm test` pod."""
    placement = {"imagePullSecrets": [{"name": "mirror"}], "priorityClassName": "games",
                 "nodeSelector": {"pool": "games"},
                 "tolerations": [{"key": "games", "operator": "Exists", "effect": "NoSchedule"}],
                 "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                     "nodeSelectorTerms": [{"matchExpressions": [
                         {"key": "pool", "operator": "In", "values": ["games"]}]}]}}}}
    objects = render({**placement, "metrics": {"collector": {"enabled": True}}})
    specs = list(pod_specs(objects))
    expect(any("collector" in where for where, _ in specs), "no collector pod rendered")
    for where, pod in specs:
        for field, value in placement.items():
            expect(pod.get(field) == value, f"{where}: {field} is {pod.get(field)!r}, not {value!r}")


def pod_extras(d: dict) -> tuple[list[dict], list[dict], list[dict]]:
    """A service pod's env, volumes and its container's volumeMounts."""
    pod = d["spec"]["template"]["spec"]
    return container_of(d).get("env", []), pod.get("volumes", []), container_of(d).get("volumeMounts", [])


def check_extras_reach_their_containers():
    """extraEnv, extraVolumes and extraVolumeMounts reach every service's pod and container, after
    the chart's own variables; services.<name>'s only that service, after the global ones, and
    its entry replaces a global one of the same name (a mount: the same mountPath). The
    collector and the helm test pod get none of them."""
    plain = {component(d): d for d in service_deployments(render(None))}
    objects = render({**EXTRAS, "metrics": {"collector": {"enabled": True}}})
    env_1 = {"name": "SSL_CERT_FILE", "value": "/etc/okey/ca/ca.pem"}
    backtrace = {"name": "RUST_BACKTRACE", "value": "1"}
    ca = EXTRAS["extraVolumes"][0]
    ca_mount = EXTRAS["extraVolumeMounts"][0]
    table, matchmaking = EXTRAS["services"]["table"], EXTRAS["services"]["matchmaking"]
    want = {
        "accounts": ([env_1, backtrace], [ca], [ca_mount]),
        "scoring": ([env_1, backtrace], [ca], [ca_mount]),
        "table": ([env_1, *table["extraEnv"]], table["extraVolumes"], [ca_mount, *table["extraVolumeMounts"]]),
        "matchmaking": ([env_1, backtrace], [ca, *matchmaking["extraVolumes"]], matchmaking["extraVolumeMounts"]),
    }
    deployments = service_deployments(objects)
    expect(sorted(component(d) for d in deployments) == sorted(SERVICES), "not every service rendered")
    for d in deployments:
        name = component(d)
        env, volumes, mounts = pod_extras(d)
        own = container_of(plain[name]).get("env", [])
        expect(env[:len(own)] == own, f"{name}: the chart's own variables are not first, unchanged: {env}")
        expect(env[len(own):] == want[name][0], f"{name}: extra env {env[len(own):]}, want {want[name][0]}")
        expect(volumes == want[name][1], f"{name}: volumes {volumes}, want {want[name][1]}")
        expect(mounts == want[name][2], f"{name}: volumeMounts {mounts}, want {want[name][2]}")
        names = [e["name"] for e in env]
        expect(len(names) == len(set(names)), f"{name}: a variable twice in its env: {names}")
    for where, pod in pod_specs(objects):
        if any(where.endswith(f"{RELEASE}-{s}") for s in SERVICES):
            continue
        extra_volumes = {"ca", "tmp", "matchmaking-ca"}
        expect(not extra_volumes & {v["name"] for v in pod.get("volumes", [])}, f"{where}: has the services' extra volumes")
        for c in pod["containers"]:
            expect(not {"/etc/okey/ca", "/tmp"} & {m["mountPath"] for m in c.get("volumeMounts", [])},
                   f"{where}/{c['name']}: has the services' extra mounts")
            expect(not {"SSL_CERT_FILE", "RUST_BACKTRACE"} & {e["name"] for e in c.get("env", [])},
                   f"{where}/{c['name']}: has the services' extraEnv")
    # Without them, no empty env, volumes or volumeMounts keys appear.
    for d in plain.values():
        expect("volumes" not in d["spec"]["template"]["spec"] and "volumeMounts" not in container_of(d),
               f"{d['metadata']['name']}: empty volumes or volumeMounts without extras")


def check_extras_roll_the_pods():
    """The extras are in the pod template, so a change to them rolls exactly the pods it
    concerns (as a settings change does through checksum/config)."""
    def templates(values):
        return {component(d): json.dumps(d["spec"]["template"], sort_keys=True)
                for d in service_deployments(render(values))}
    ca = {"extraVolumes": EXTRAS["extraVolumes"], "extraVolumeMounts": EXTRAS["extraVolumeMounts"]}
    tmp = {"extraVolumes": [{"name": "tmp", "emptyDir": {}}], "extraVolumeMounts": [{"name": "tmp", "mountPath": "/tmp"}]}
    base = templates(None)
    cases = [
        ("a global extraEnv entry", {"extraEnv": [{"name": "SSL_CERT_FILE", "value": "/etc/okey/ca/ca.pem"}]}, SERVICES),
        ("a global extraEnv value changed", {"extraEnv": [{"name": "SSL_CERT_FILE", "value": "/etc/okey/ca/other.pem"}]}, SERVICES),
        ("global extra volumes", ca, SERVICES),
        ("table's extraEnv", {"services": {"table": {"extraEnv": [{"name": "RUST_BACKTRACE", "value": "1"}]}}}, ["table"]),
        ("scoring's extra volume", {"services": {"scoring": tmp}}, ["scoring"]),
    ]
    seen = {}
    for what, values, rolled in cases:
        now = templates(values)
        for s in SERVICES:
            expect((now[s] != base[s]) == (s in rolled),
                   f"{what}: the {s} pod template {'did not change' if s in rolled else 'changed'}")
        seen[what] = now
    expect(seen["a global extraEnv entry"]["table"] != seen["a global extraEnv value changed"]["table"],
           "a changed extraEnv value leaves the pod template as it was")


def check_guide_tls_example(venv_bin: Path):
    """docs/operations.md's private-CA example renders and validates, and the file it mounts is
    the one SSL_CERT_FILE and the database URLs' sslrootcert name."""
    text = GUIDE.read_text()
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "extraVolumeMounts" in b]
    expect(len(blocks) == 1, f"{len(blocks)} yaml examples of extraVolumeMounts in the guide, want 1")
    example = yaml.safe_load(blocks[0])
    objects = render(example)
    kubernetes_validate(objects, "the guide's private CA", venv_bin)
    merged = merged_values(example)
    for check in RENDER_CHECKS:
        check(objects, merged)
    cert_file = {e["name"]: e.get("value") for e in example["extraEnv"]}.get("SSL_CERT_FILE")
    expect(cert_file is not None, "the guide's example sets no SSL_CERT_FILE")
    roots = set(re.findall(r"sslrootcert=([^\s&'`)]+)", text))
    expect(roots == {cert_file}, f"the guide's sslrootcert {roots} is not SSL_CERT_FILE {cert_file}")
    for d in service_deployments(objects):
        env, volumes, mounts = pod_extras(d)
        expect(any(cert_file.startswith(m["mountPath"].rstrip("/") + "/") for m in mounts),
               f"{d['metadata']['name']}: {cert_file} is under none of its mounts {mounts}")
        expect({"name": "SSL_CERT_FILE", "value": cert_file} in env, f"{d['metadata']['name']}: no SSL_CERT_FILE")


def check_value_switches():
    """Values that leave something out, and what NOTES.txt says."""
    # A zero preStop sleep leaves the hook out (Kubernetes < 1.33 refuses a sleep of 0).
    zero = render({"preStopSleepSeconds": 0})
    for d in service_deployments(zero):
        expect("lifecycle" not in container_of(d), f"{d['metadata']['name']}: a preStop hook with preStopSleepSeconds 0")
    check_rollout(zero, merged_values({"preStopSleepSeconds": 0}))
    for d in service_deployments(render(None)):
        expect(container_of(d)["lifecycle"]["preStop"]["sleep"]["seconds"] == 5, f"{d['metadata']['name']}: no preStop sleep")
    # A per-service drain shorter than the pod's grace renders, and the check holds per service.
    longer = {"terminationGracePeriodSeconds": 70, "services": {"table": {"config": {"server": {"grace_period_ms": 60000}}}}}
    check_rollout(render(longer), merged_values(longer))
    # The monitors only where the cluster serves their API; NOTES.txt says when they are skipped.
    production = load_values(PRODUCTION)
    with_crd = render_manifests(production, [MONITORING_API])
    without = render_manifests(production)
    expect("kind: ServiceMonitor" in with_crd["okey/templates/monitors.yaml"], "no ServiceMonitor where the CRD is served")
    expect("kind: ServiceMonitor" not in without.get("okey/templates/monitors.yaml", ""),
           "a ServiceMonitor rendered for a cluster without monitoring.coreos.com/v1")
    notes = " ".join(without["okey/templates/NOTES.txt"].split())
    expect("no monitor was created" in notes, f"NOTES.txt does not say the monitors were skipped: {notes}")
    expect("no monitor was created" not in " ".join(with_crd["okey/templates/NOTES.txt"].split()),
           "NOTES.txt says the monitors were skipped where they were not")
    # NOTES.txt names the image tag that runs: image.tag when set, else the appVersion.
    app_version = yaml.safe_load((CHART / "Chart.yaml").read_text())["appVersion"]
    tagged = render_manifests({"image": {"tag": "9.9.9-test"}})["okey/templates/NOTES.txt"]
    expect(tagged.startswith("okey 9.9.9-test "), f"NOTES.txt does not name image.tag: {tagged.splitlines()[0]}")
    plain = render_manifests(None)["okey/templates/NOTES.txt"]
    expect(plain.startswith(f"okey {app_version} "), f"NOTES.txt does not name the appVersion: {plain.splitlines()[0]}")


def check_checksum_rolls_pods():
    def checksums(values):
        return {component(d): d["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
                for d in service_deployments(render(values))}
    base = checksums(None)
    common = checksums({"config": {"live": {"bot_pace_ms": 900}}})
    expect(all(common[s] != base[s] for s in SERVICES), "a common setting change does not roll every service")
    table_only = checksums({"services": {"table": {"config": {"live": {"bot_pace_ms": 0}}}}})
    expect(table_only["table"] != base["table"], "a table setting change does not roll table")
    expect(all(table_only[s] == base[s] for s in SERVICES if s != "table"), "a table setting rolls other services")
    zero = render({"services": {"table": {"config": {"live": {"bot_pace_ms": 0}}}}})
    expect(config_data(zero, "table")["OKEY_LIVE__BOT_PACE_MS"] == "0", "a per-service 0 does not override")
    expect(config_data(zero, "table")["OKEY_TOKENS__REFRESH_TTL_SECS"] == "2592000", "large numbers are mangled")


def check_monitors_honor_labels():
    """Both monitors, where the cluster serves their API, keep the job and instance labels the
    collector's exporter sets per service; check_monitors refuses one without honorLabels."""
    values = load_values(PRODUCTION)
    values["metrics"]["podMonitor"] = {"enabled": True}
    objects = render(values, [MONITORING_API])
    expect(len([o for o in objects if o["kind"] in CUSTOM_KINDS]) == 2, "not both monitors rendered")
    check_monitors(objects, merged_values(values))
    for kind, field in (("ServiceMonitor", "endpoints"), ("PodMonitor", "podMetricsEndpoints")):
        broken = copy.deepcopy(objects)
        del of_kind(broken, kind)[0]["spec"][field][0]["honorLabels"]
        try:
            check_monitors(broken, merged_values(values))
        except CheckFailed:
            continue
        raise CheckFailed(f"check_monitors passes a {kind} without honorLabels")


def check_shared_secrets_follow_the_dependencies():
    """A shared secrets.nats entry (NATS credentials in its URL) reaches only the services that
    use NATS, as secrets.redis only those that use Redis."""
    values = {"secrets": {"nats": {"url": {"name": "okey-nats", "key": "url"}},
                          "redis": {"url": {"name": "okey-redis", "key": "url"}}}}
    objects = render(values)
    merged = merged_values(values)
    check_secrets(objects, merged)
    for d in service_deployments(objects):
        name, svc = component(d), merged["services"][component(d)]
        env = env_of(d)
        for dependency in ("nats", "redis"):
            var = f"OKEY_{dependency.upper()}__URL"
            expect((var in env) == svc[dependency],
                   f"{name}: {var} from a Secret {'missing' if svc[dependency] else 'given'} "
                   f"(services.{name}.{dependency} is {svc[dependency]})")
    expect(not merged["services"]["matchmaking"]["nats"], "matchmaking uses NATS again: this check lost its case")
    # The broken case: a NATS secret in matchmaking's pod is caught.
    broken = copy.deepcopy(objects)
    container_of(next(d for d in service_deployments(broken) if component(d) == "matchmaking"))["env"].append(
        {"name": "OKEY_NATS__URL", "valueFrom": {"secretKeyRef": {"name": "okey-nats", "key": "url"}}})
    try:
        check_secrets(broken, merged)
    except CheckFailed:
        return
    raise CheckFailed("check_secrets passes a NATS secret in matchmaking, which does not use NATS")


def notes(values: dict | None) -> str:
    """NOTES.txt as rendered, its whitespace collapsed."""
    return " ".join(render_manifests(values)["okey/templates/NOTES.txt"].split())


def check_notes_warnings():
    """NOTES.txt warns when the image tag is the chart's appVersion (the same for every build)
    and when accounts sits behind the ingress without config.sign_in.trusted_proxies."""
    app_version = yaml.safe_load((CHART / "Chart.yaml").read_text())["appVersion"]
    same_tag = "WARNING: the image tag"
    proxies = "WARNING: config.sign_in.trusted_proxies is unset"
    trusted = {"config": {"sign_in": {"trusted_proxies": "10.244.0.0/16"}}}
    digests = {s: "sha256:" + hashlib.sha256(s.encode()).hexdigest() for s in SERVICES}
    cases = [
        ("the defaults", None, {same_tag, proxies}),
        ("a build's own tag, proxies set", {"image": {"tag": "3f2a9c1"}, **trusted}, set()),
        ("image.tag set to the appVersion", {"image": {"tag": app_version}, **trusted}, {same_tag}),
        ("every service pinned by digest", {"image": {"digests": digests}, **trusted}, set()),
        ("one service pinned by digest", {"image": {"digests": {"table": digests["table"]}}, **trusted}, {same_tag}),
        ("proxies set for accounts only", {"image": {"tag": "3f2a9c1"},
                                           "services": {"accounts": {"config": {"sign_in": {"trusted_proxies": "10.0.0.0/8"}}}}}, set()),
        ("proxies from a Secret", {"image": {"tag": "3f2a9c1"},
                                   "secrets": {"sign_in": {"trusted_proxies": {"name": "okey-proxies", "key": "cidrs"}}}}, set()),
        ("proxies empty", {"image": {"tag": "3f2a9c1"}, "config": {"sign_in": {"trusted_proxies": ""}}}, {proxies}),
        ("no ingress in front", {"image": {"tag": "3f2a9c1"}, "networkPolicy": {"ingressFrom": []}}, set()),
    ]
    for what, values, want in cases:
        text = notes(values)
        for warning in (same_tag, proxies):
            expect((warning in text) == (warning in want),
                   f"NOTES.txt with {what}: {'no' if warning in want else 'a'} warning {warning!r}: {text}")
    production = notes(load_values(PRODUCTION))
    expect(proxies not in production, "NOTES.txt warns of trusted_proxies with the production values, which set it")


def chart_version_problem(later_commits: list[str], pending: list[str], head_version: str | None,
                          version: str) -> str | None:
    """Why Chart.yaml's version is stale, or None: commits that changed the chart after its
    version last changed, or changes not yet committed under an unchanged version."""
    if later_commits:
        return (f"helm/okey changed in {len(later_commits)} commit(s) after its version last changed "
                f"({', '.join(c[:8] for c in later_commits[:3])}): bump version in Chart.yaml")
    if pending and head_version == version:
        return f"helm/okey has changes ({', '.join(pending[:3])}) but version is still {version}: bump it"
    return None


def check_chart_version_bumped():
    """Chart.yaml: "bump it with every change to the chart", checked against git where there is
    a history (a source archive has none; a shallow clone may lack the bump, then only pending
    changes count)."""
    git = ["git", "-C", str(ROOT)]

    def out(*args: str) -> str | None:
        run = subprocess.run(git + list(args), capture_output=True, text=True)
        return run.stdout.strip() if run.returncode == 0 else None

    if out("rev-parse", "--is-inside-work-tree") != "true":
        print("     (not a git checkout: the version bump is not checked)", flush=True)
        return
    chart_yaml = "helm/okey/Chart.yaml"
    version = str(yaml.safe_load((CHART / "Chart.yaml").read_text())["version"])
    head = out("show", f"HEAD:{chart_yaml}")
    head_version = str(yaml.safe_load(head)["version"]) if head else None
    bump = out("log", "-1", "--format=%H", "-G", "^version:", "--", chart_yaml)
    later = (out("rev-list", f"{bump}..HEAD", "--", "helm/okey") or "").split() if bump else []
    pending = [line[3:] for line in (out("status", "--porcelain", "--", "helm/okey") or "").splitlines()]
    problem = chart_version_problem(later, pending, head_version, version)
    expect(problem is None, problem or "")
    # And the rule itself catches both kinds of staleness.
    expect(chart_version_problem(["0123456789abcdef"], [], "0.3.2", "0.3.2") is not None, "a later commit passes")
    expect(chart_version_problem([], ["helm/okey/values.yaml"], "0.3.2", "0.3.2") is not None,
           "a pending change under the same version passes")
    expect(chart_version_problem([], ["helm/okey/values.yaml"], "0.3.2", "0.3.3") is None, "a bumped change fails")


# ---------------------------------------------------------------------------------------------
# The operations guide's commands and value paths exist


GUIDE = ROOT / "docs" / "operations.md"
HELM_VERBS = {"install", "upgrade", "lint", "test", "rollback", "template", "uninstall", "status",
              "history", "get", "package", "show", "list"}
HELM_FLAGS = {"--install", "--wait", "--timeout", "-f", "--values", "-n", "--namespace", "--strict",
              "--atomic", "--rollback-on-failure", "--set", "--set-string"}
KUBECTL_VERBS = {"create", "get", "logs", "rollout", "run", "port-forward", "scale", "apply", "exec",
                 "describe", "delete"}
VALUE_ROOTS = ("config.", "services.", "secrets.", "networkPolicy.", "metrics.", "probes.",
               "topologySpread", "updateStrategy", "preStopSleepSeconds", "terminationGracePeriodSeconds",
               "image.", "serviceAccount.", "extraEnv", "extraVolumes", "extraVolumeMounts")


def guide_commands(text: str) -> list[str]:
    """The command lines of the guide: fenced sh blocks and inline code that starts with a tool."""
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        joined = block.replace("\\\n", " ")
        lines += [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]
    for code in re.findall(r"`([^`\n]+)`", text):
        if code.split(" ")[0] in {"make", "helm", "kubectl", "okeyctl", "cargo"} and " " in code:
            lines.append(code)
    return lines


def value_path_exists(values: dict, path: str) -> bool:
    node = values
    for part in path.split("."):
        if part == "<name>":
            node = node[SERVICES[2]] if isinstance(node, dict) and SERVICES[2] in node else None
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return False
    return True


def check_guide(text: str | None = None):
    text = GUIDE.read_text() if text is None else text
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, re.M))
    okeyctl_main = (ROOT / "crates" / "okeyctl" / "src" / "main.rs").read_text()
    top = re.search(r"command: (\w+),\n\}", okeyctl_main)
    expect(top is not None, "okeyctl: the top-level subcommand enum was not found")
    enum = re.search(rf"enum {top.group(1)} \{{(.*?)\n\}}", okeyctl_main, re.S).group(1)
    subcommands = {re.sub(r"(?<!^)(?=[A-Z])", "-", v).lower() for v in re.findall(r"^    ([A-Z]\w*)", enum, re.M)}
    expect({"replay", "export-hand"} <= subcommands, f"okeyctl subcommands: {subcommands}")
    commands = guide_commands(text)
    expect(len(commands) > 20, f"only {len(commands)} commands found in the guide")
    for line in commands:
        words = line.split()
        for word in words:
            path = word.strip("'\"`(),;")
            if re.fullmatch(r"(deploy|helm|tests|crates|services|docs|migrations)/[\w./-]+", path) and "…" not in path:
                expect((ROOT / path).exists(), f"the guide names {path}, which does not exist: {line}")
        tool = words[0]
        # Each build gets a tag of its own, and each deploy names it (docs: "Install", step 2).
        if tool == "docker" and "build" in words and "-t" in words:
            image = words[words.index("-t") + 1]
            expect(not re.search(r":v?[0-9]+(\.[0-9]+)+$", image),
                   f"the guide builds a fixed version tag ({image}), which nodes never pull again: {line}")
        if tool == "helm" and words[1] in {"install", "upgrade"} and "helm/okey" in words:
            expect(any("image.tag=" in w or "image.digests." in w for w in words),
                   f"the guide deploys without --set image.tag (the chart's default tag, the same for every build): {line}")
        if tool == "make":
            expect(words[1] in targets, f"the guide runs make {words[1]}, which is no target")
        elif tool == "helm":
            expect(words[1] in HELM_VERBS, f"the guide runs helm {words[1]}")
            for flag in words[2:]:
                if flag.startswith("-"):
                    expect(flag.split("=")[0] in HELM_FLAGS, f"the guide gives helm {flag}: {line}")
        elif tool == "kubectl":
            verbs = [w for w in words[1:] if not w.startswith("-") and w not in {"okey", "nats"}]
            expect(verbs and verbs[0] in KUBECTL_VERBS, f"the guide runs kubectl {verbs[:1]}: {line}")
            if verbs[0] == "rollout":
                expect(verbs[1] in {"restart", "status", "undo", "history"}, f"kubectl rollout {verbs[1]}")
        elif tool == "okeyctl":
            expect(words[1] in subcommands, f"the guide runs okeyctl {words[1]}, which is no subcommand")
        elif tool == "cargo" and "--bench" in words:
            package = words[words.index("-p") + 1]
            bench = words[words.index("--bench") + 1]
            expect(any((ROOT / base / package / "benches" / f"{bench}.rs").exists() for base in ("crates", "services")),
                   f"the guide runs bench {bench} of {package}, which does not exist")
    values = chart_values()
    for code in re.findall(r"`([^`\n]+)`", text):
        token = code.split("=")[0]
        generic = re.search(r"<(?!name>)\w+>", token)  # config.<section>.<key> names a form
        if token.startswith(VALUE_ROOTS) and re.fullmatch(r"[\w.<>]+", token) and not generic:
            expect(value_path_exists(values, token), f"the guide names value {token}, which the chart does not have")


# ---------------------------------------------------------------------------------------------
# The image build (no Docker here: what can be checked without building)


def check_dockerfile():
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    ignored = [line.strip().rstrip("/") for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#") and "*" not in line]
    workspace = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]
    needed = list(workspace["members"]) + ["Cargo.toml", "Cargo.lock", "proto", "migrations"]
    for path in needed:
        expect(not any(path == i or path.startswith(i + "/") for i in ignored),
               f".dockerignore leaves {path} out of the build context")
    steps = [line.strip() for line in dockerfile.replace("\\\n", " ").splitlines()
             if line.strip() and not line.strip().startswith("#")]
    cargo = [step for step in steps if re.search(r"\bcargo (build|chef cook|install)\b", step)]
    expect(len(cargo) >= 3 and all("--locked" in step for step in cargo), f"a cargo step without --locked: {cargo}")
    cook = next(i for i, step in enumerate(steps) if "cargo chef cook" in step)
    build = next(i for i, step in enumerate(steps) if "cargo build" in step)
    copies = [i for i, step in enumerate(steps) if step.startswith("COPY . .")]
    expect(any(cook < i < build for i in copies), "the sources are copied before the dependencies are built")
    final = dockerfile.rsplit("\nFROM ", 1)[1]
    user = re.search(r"^USER (\S+)", final, re.M)
    expect(user is not None and not user.group(1).startswith(("0", "root")), "the runtime image runs as root")


def lint_strict(values, label):
    for kube in KUBE_VERSIONS:
        report = helm.lint(CHART, values, strict=True, kube_version=f"v{kube}")
        problems = [m for m in report["messages"] if m["severity"] >= 2] + report["errors"]
        expect(not problems, f"helm lint --strict ({label}, Kubernetes {kube}): {problems}")


def kubernetes_validate(objects, label, venv_bin: Path):
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for i, o in enumerate(objects):
            path = Path(tmp) / f"{i:03}-{o['kind']}-{o['metadata']['name']}.yaml"
            path.write_text(yaml.safe_dump({k: v for k, v in o.items() if k != "_template"}))
            files.append(str(path))
        for kube in KUBE_VERSIONS:
            run = subprocess.run([str(venv_bin / "kubernetes-validate"), "--strict", "-k", kube, *files],
                                 capture_output=True, text=True)
            lines = run.stdout.splitlines()
            errors = [line for line in lines if line.startswith(("ERROR", "FATAL"))]
            warned = [line for line in lines if line.startswith("WARN")]
            passed = [line for line in lines if line.startswith("INFO") and " passed " in line]
            expect(run.returncode == 0 and not errors, f"kubernetes-validate ({label}, {kube}): {errors or run.stderr}")
            custom = sum(1 for o in objects if o["kind"] in CUSTOM_KINDS)
            expect(len(warned) == custom and len(passed) == len(objects) - custom,
                   f"kubernetes-validate ({label}, {kube}): {len(passed)} passed, warnings {warned}")


# ---------------------------------------------------------------------------------------------


def main() -> int:
    venv_bin = Path(sys.executable).parent
    results: list[tuple[str, str | None]] = []

    def run(name, fn, *args):
        try:
            fn(*args)
            results.append((name, None))
            print(f"ok   {name}", flush=True)
        except (CheckFailed, helm.HelmError, subprocess.SubprocessError, KeyError, TypeError) as e:
            results.append((name, f"{type(e).__name__}: {e}"))
            print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)

    production = load_values(PRODUCTION)
    renders = {}
    # The production values turn a ServiceMonitor on: rendered for a cluster that serves its API.
    # The extras rendering (extraEnv, extra volumes) must pass every check the others pass.
    for label, values, apis in (("defaults", None, None), ("production", production, [MONITORING_API]),
                                ("extraEnv and volumes", EXTRAS, None)):
        run(f"lint --strict ({label})", lint_strict, values, label)
        try:
            renders[label] = (render(values, apis), merged_values(values))
            results.append((f"render ({label})", None))
            print(f"ok   render ({label}): {len(renders[label][0])} objects", flush=True)
        except helm.HelmError as e:
            results.append((f"render ({label})", str(e)))
            print(f"FAIL render ({label}): {e}", flush=True)
            continue
        run(f"kubernetes-validate --strict ({label})", kubernetes_validate, renders[label][0], label, venv_bin)
        for check in RENDER_CHECKS:
            run(f"{check.__name__} ({label})", check, *renders[label])

    if "defaults" in renders:
        objects, values = renders["defaults"]
        for breakage, check in BREAKAGES:
            def must_fail(breakage=breakage, check=check):
                broken = copy.deepcopy(objects)
                breakage(broken)
                try:
                    check(broken, values)
                except CheckFailed:
                    return
                raise CheckFailed(f"{check.__name__} passes a rendering broken by {breakage.__name__}")
            run(f"{check.__name__} catches {breakage.__name__.lstrip('_')}", must_fail)

        def validate_must_fail():
            broken = copy.deepcopy(objects)
            first_service(broken)["spec"]["template"]["spec"]["containers"][0]["readinessProbes"] = {}
            try:
                kubernetes_validate(broken, "broken", venv_bin)
            except CheckFailed:
                return
            raise CheckFailed("kubernetes-validate --strict passes a Deployment with an unknown field")
        run("kubernetes-validate --strict catches an unknown field", validate_must_fail)

    run("the schema refuses bad values", check_schema_refuses_bad_values)
    run("the chart refuses inconsistent values", check_template_refusals)
    run("the grace check rounds the drain up and counts the telemetry flush", check_grace_counts_the_flush)
    run("both monitors keep the collector's job and instance labels (honorLabels)", check_monitors_honor_labels)
    run("secrets.nats and secrets.redis reach only the services that use them", check_shared_secrets_follow_the_dependencies)
    run("NOTES.txt warns of the appVersion image tag and of unset trusted_proxies", check_notes_warnings)
    run("Chart.yaml's version changed with the chart", check_chart_version_bumped)
    run("preStop 0, per-service drains, monitors without their CRD, NOTES.txt's tag", check_value_switches)
    run("a settings change rolls exactly the pods it concerns", check_checksum_rolls_pods)
    run("egress follows an explicit OTLP endpoint and networkPolicy.extraEgress", check_egress_follows_the_endpoints)
    run("a service's own OTLP endpoint is the one it sends to, and its egress follows it",
        check_egress_follows_each_service_endpoint)
    run("an all-digit image.tag from --set is written as the integer it was", check_image_tag_as_a_number)
    run("the version label fits in 63 characters, the image keeps the whole tag", check_version_label_is_bounded)
    run("a chart release alone rolls no pod; a new image tag only the services'", check_pods_roll_with_what_they_run)
    run("the documented connection sums are what the values and sources make", check_connection_figures)
    run("the documented commands give image.tag with --set-string", check_tag_commands)

    def tag_commands_must_fail():
        try:
            check_tag_commands({"guide": 'helm upgrade okey helm/okey -n okey --set image.tag="$TAG" --wait',
                                "values": "# --set-string image.tag=<commit>"})
        except CheckFailed:
            return
        raise CheckFailed("check_tag_commands accepts --set image.tag=")
    run("check_tag_commands catches --set image.tag=", tag_commands_must_fail)
    run("placement values reach every pod (services, collector, helm test)", check_placement_reaches_every_pod)
    run("extraEnv and extra volumes reach their services' pods, per-service ones override by name",
        check_extras_reach_their_containers)
    run("a change of extraEnv or extra volumes rolls exactly the pods it concerns", check_extras_roll_the_pods)
    run("the guide's private-CA example renders, validates and names one CA file", check_guide_tls_example, venv_bin)
    run("the operations guide's commands and value paths exist", check_guide)
    run("the Dockerfile builds --locked, caches dependencies apart, runs non-root", check_dockerfile)
    for wrong in ("okeyctl export-table x 1", "make deploy", "helm upgrade okey helm/okey --force",
                  "kubectl rollout restart deployment/okey-table && cat deploy/okey.yaml",
                  "`config.server.drain_ms`",
                  "helm upgrade okey helm/okey -n okey -f my-values.yaml --wait --timeout 10m",
                  "docker build -f deploy/Dockerfile --build-arg SERVICE=table -t example/okey/table:0.1.0 ."):
        def guide_must_fail(wrong=wrong):
            try:
                check_guide(GUIDE.read_text() + f"\n```sh\n{wrong.strip('`')}\n```\n" if not wrong.startswith("`")
                            else GUIDE.read_text() + f"\n{wrong}\n")
            except CheckFailed:
                return
            raise CheckFailed(f"check_guide accepts {wrong}")
        run(f"check_guide catches {wrong}", guide_must_fail)

    failed = [r for r in results if r[1]]
    print(f"chart: {len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
