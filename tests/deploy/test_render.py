"""deploy/ renders with kubectl's kustomize, and every rendered object is valid Kubernetes:
built-in kinds (CRDs included) under kubernetes-validate's schemas of 1.26 (the oldest
cluster vcflow supports) and of the newest it ships, strictly (an unknown field is an
error, as `kubectl apply`'s strict field validation makes it); cert-manager's kinds, which
it has no schema for, structurally. The CRDs also go through `kubectl create --dry-run`.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import kubernetes_validate
import pytest
import yaml
from tests.server.test_kubectl import kubectl_binary

from vcflow.kubeapi import crds
from vcflow.serving.exposure import BadTokenFile, read_token

from .rendered import (
    DEPLOY,
    NAMESPACE,
    REPO,
    base,
    cert_manager,
    container,
    kustomize,
    one,
    with_metrics,
)

OLDEST = "1.26.0"
VERSIONS = [OLDEST, kubernetes_validate.latest_version()]


def _name(obj: dict[str, Any]) -> str:
    return f"{obj['kind']}/{obj['metadata']['name']}"


def test_the_base_renders_every_object() -> None:
    assert sorted(_name(o) for o in base()) == [
        "ClusterRole/vcflow-operator",
        "ClusterRole/vcflow-webhook",
        "ClusterRoleBinding/vcflow-operator",
        "ClusterRoleBinding/vcflow-webhook",
        "CustomResourceDefinition/jobflows.flow.volcano.sh",
        "CustomResourceDefinition/jobtemplates.flow.volcano.sh",
        "Deployment/vcflow-operator",
        "Deployment/vcflow-webhook",
        "Namespace/vcflow-system",
        "PodDisruptionBudget/vcflow-webhook",
        "Role/vcflow-operator-leader-election",
        "Role/vcflow-operator-scheduler-config",
        "RoleBinding/vcflow-operator-leader-election",
        "RoleBinding/vcflow-operator-scheduler-config",
        "Service/vcflow-webhook",
        "ServiceAccount/vcflow-operator",
        "ServiceAccount/vcflow-webhook",
        "ValidatingWebhookConfiguration/vcflow-webhook",
    ]
    cluster_scoped = {"Namespace", "CustomResourceDefinition", "ValidatingWebhookConfiguration"}
    cluster_scoped |= {"ClusterRole", "ClusterRoleBinding"}
    for obj in base():
        wanted = None if obj["kind"] in cluster_scoped else NAMESPACE
        if obj["metadata"]["name"] == "vcflow-operator-scheduler-config":
            wanted = "volcano-system"  # (vc-scheduler's ConfigMap is there)
        assert obj["metadata"].get("namespace") == wanted, _name(obj)


def test_the_base_holds_the_crds_write_crds_writes() -> None:
    """scripts/write_crds.py writes deploy/crds/: the base lists each of its files, and
    renders them as they are."""
    kustomization = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    listed = [r for r in kustomization["resources"] if r.startswith("crds/")]
    assert sorted(listed) == sorted(f"crds/{name}" for name in crds.files())
    rendered = [o for o in base() if o["kind"] == "CustomResourceDefinition"]
    assert sorted(rendered, key=_name) == sorted(
        (crds.definition(kind) for kind in crds.KINDS), key=_name
    )


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("rendered", [base, with_metrics], ids=["base", "with-metrics"])
def test_every_rendered_object_validates_under_kubernetes_schemas(
    version: str, rendered: Any
) -> None:
    for obj in rendered():
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as error:
            path = ".".join(map(str, error.absolute_path))
            pytest.fail(f"{_name(obj)} under {version}: {path}: {error.message}")


@pytest.mark.parametrize(
    ("kind", "change", "message"),
    [
        ("Deployment", lambda d: d["spec"].update(replica=2), "replica"),
        (
            "CustomResourceDefinition",
            lambda d: d["spec"]["versions"][0].update(served="yes"),
            "'yes' is not of type 'boolean'",
        ),
        ("ValidatingWebhookConfiguration", lambda d: d["webhooks"][0].pop("name"), "name"),
    ],
    ids=["unknown-field", "wrong-type", "missing-required"],
)
def test_the_validation_refuses_what_the_api_server_refuses(
    kind: str, change: Any, message: str
) -> None:
    """The control: the strict schemas do catch an unknown field, a value of the wrong type
    and a missing required field, so the test above could fail."""
    obj = copy.deepcopy(next(o for o in base() if o["kind"] == kind))
    change(obj)
    with pytest.raises(kubernetes_validate.ValidationError, match=message):
        kubernetes_validate.validate(obj, OLDEST, strict=True)


def test_every_object_fits_client_side_apply() -> None:
    """`kubectl apply` (client side) keeps the whole object in an annotation, and the
    API server refuses annotations over 256 KiB: every object stays well under."""
    for obj in base():
        assert len(json.dumps(obj, separators=(",", ":"))) < 200_000, _name(obj)


def test_the_images_are_tagged_with_pyprojects_version() -> None:
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    deployments = [o for o in base() if o["kind"] == "Deployment"]
    assert len(deployments) == 2
    for deployment in deployments:
        assert container(deployment)["image"] == f"ghcr.io/vcflow/vcflow:{version}"
    metered = one(with_metrics(), "Deployment", "vcflow-operator")
    (init,) = metered["spec"]["template"]["spec"]["initContainers"]
    assert init["image"] == container(metered)["image"] == f"ghcr.io/vcflow/vcflow:{version}"


def test_an_overlay_sets_the_image_as_docs_kubernetes_shows(tmp_path: Path) -> None:
    """The overlay of docs/kubernetes.md's "The image", beside a checkout, replaces the
    image of both Deployments (and of the metrics component's init container)."""
    docs = (REPO / "docs" / "kubernetes.md").read_text()
    shown = docs.split("# my-vcflow/kustomization.yaml\n", 1)[1].split("```", 1)[0]
    overlay = tmp_path / "my-vcflow"
    overlay.mkdir()
    (tmp_path / "vcflow").symlink_to(REPO)  # `../vcflow/deploy`, as the docs lay it out
    (overlay / "kustomization.yaml").write_text(shown + "components: [../vcflow/deploy/metrics]\n")
    rendered = kustomize(overlay)
    wanted = "registry.example.com/team/vcflow:0.1.0"
    deployments = [o for o in rendered if o["kind"] == "Deployment"]
    assert [container(d)["image"] for d in deployments] == [wanted, wanted]
    (init,) = one(rendered, "Deployment", "vcflow-operator")["spec"]["template"]["spec"][
        "initContainers"
    ]
    assert init["image"] == wanted
    assert "ghcr.io/vcflow" not in yaml.safe_dump_all(rendered)


def test_the_operator_deployment() -> None:
    deployment = one(base(), "Deployment", "vcflow-operator")
    pod = deployment["spec"]["template"]["spec"]
    main = container(deployment)
    assert deployment["spec"]["replicas"] == 2
    # the kubelet probes the pod IP: the health port listens on every address; /metrics
    # stays on the pod's loopback (the default 127.0.0.1:8080), so no port is declared
    assert main["command"] == ["vcflow", "operator", "--leader-elect", "--health-addr=0.0.0.0:8081"]
    assert pod["serviceAccountName"] == "vcflow-operator"
    assert main["ports"] == [{"name": "health", "containerPort": 8081, "protocol": "TCP"}]
    assert main["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert main["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    assert "annotations" not in deployment["spec"]["template"]["metadata"]
    assert set(main["resources"]) == {"requests", "limits"}
    _assert_restricted(deployment)


def test_the_metrics_component_serves_metrics_on_the_pod_ip_with_token_and_tls() -> None:
    """deploy/metrics: /metrics on 0.0.0.0:8443 with the flags a non-loopback address
    needs, the token copied owner-only (the operator's own file) from its Secret, the TLS
    pair from its Secret; nothing else of the base changes."""
    deployment = one(with_metrics(), "Deployment", "vcflow-operator")
    pod = deployment["spec"]["template"]["spec"]
    main = container(deployment)
    assert main["command"] == [
        "vcflow", "operator", "--leader-elect", "--health-addr=0.0.0.0:8081",
        "--metrics-addr=0.0.0.0:8443", "--metrics-token-file=/run/metrics/token",
        "--metrics-tls-cert=/metrics-tls/tls.crt", "--metrics-tls-key=/metrics-tls/tls.key",
    ]  # fmt: skip
    assert sorted(p["name"] for p in main["ports"]) == ["health", "metrics"]
    assert {"name": "metrics", "containerPort": 8443, "protocol": "TCP"} in main["ports"]
    assert main["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/port"] == "8443"
    assert annotations["prometheus.io/scheme"] == "https"
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m["name"] for m in main["volumeMounts"]}
    assert volumes[mounts["/metrics-tls"]]["secret"]["secretName"] == "vcflow-operator-metrics-tls"
    (init,) = pod["initContainers"]
    init_mounts = {m["mountPath"]: m["name"] for m in init["volumeMounts"]}
    token = volumes[init_mounts["/metrics-token"]]["secret"]
    assert token["secretName"] == "vcflow-operator-metrics-token"
    assert init_mounts["/run/metrics"] == mounts["/run/metrics"]
    assert volumes[mounts["/run/metrics"]]["emptyDir"]["medium"] == "Memory"
    assert "os.umask(0o077)" in init["command"][-1]
    assert pod["securityContext"]["fsGroup"] == pod["securityContext"]["runAsGroup"]
    assert init["securityContext"] == main["securityContext"]
    _assert_restricted(deployment)
    others = [o for o in with_metrics() if _name(o) != "Deployment/vcflow-operator"]
    assert others == [o for o in base() if _name(o) != "Deployment/vcflow-operator"]


def test_the_metrics_init_containers_copy_is_a_token_file_the_operator_accepts(
    tmp_path: Path,
) -> None:
    """The init container's command, run here on a group-readable Secret-like file: the
    copy is owner-only, so `--metrics-token-file` (serving.exposure.read_token) takes it,
    where the Secret's own file (root's, 0440) it would refuse."""
    pod = one(with_metrics(), "Deployment", "vcflow-operator")["spec"]["template"]["spec"]
    (init,) = pod["initContainers"]
    secret = tmp_path / "metrics-token"
    secret.mkdir()
    (secret / "token").write_text("s3cret\n")
    (secret / "token").chmod(0o440)
    run = tmp_path / "run"
    run.mkdir()
    script = init["command"][-1].replace("/metrics-token/", f"{secret}/")
    script = script.replace("/run/metrics/", f"{run}/")
    assert init["command"][:2] == ["python3", "-c"]
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    assert read_token(run / "token") == "s3cret"
    with pytest.raises(BadTokenFile):
        read_token(secret / "token")


def test_the_webhook_deployment_serves_the_services_port_with_the_secrets_certificate() -> None:
    deployment = one(base(), "Deployment", "vcflow-webhook")
    main = container(deployment)
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "vcflow-webhook"
    assert main["command"] == [
        "vcflow",
        "webhook",
        "--tls-cert=/tls/tls.crt",
        "--tls-key=/tls/tls.key",
        "--host=0.0.0.0",  # the default is 127.0.0.1; the Service reaches the pod's IP
        "--port=8443",
    ]
    assert main["livenessProbe"]["httpGet"] == {
        "path": "/healthz",
        "port": "https",
        "scheme": "HTTPS",
    }
    assert main["readinessProbe"]["httpGet"] == {
        "path": "/readyz",
        "port": "https",
        "scheme": "HTTPS",
    }
    assert main["ports"] == [{"name": "https", "containerPort": 8443, "protocol": "TCP"}]
    (mount,) = [m for m in main["volumeMounts"] if m["mountPath"] == "/tls"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert volume["secret"]["secretName"] == "vcflow-webhook-tls"
    assert main["lifecycle"]["preStop"]["exec"]["command"] == ["sleep", "5"]
    budget = one(base(), "PodDisruptionBudget", "vcflow-webhook")
    assert budget["spec"]["selector"] == deployment["spec"]["selector"]
    assert budget["spec"]["minAvailable"] == 1 < deployment["spec"]["replicas"]
    service = one(base(), "Service", "vcflow-webhook")
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"] == [
        {"name": "https", "port": 443, "targetPort": "https", "protocol": "TCP"}
    ]
    _assert_restricted(deployment)


def _assert_restricted(deployment: dict[str, Any]) -> None:
    """Pod Security's `restricted` level, which the namespace enforces."""
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    context = container(deployment)["securityContext"]
    assert context["runAsNonRoot"] is True
    assert context["readOnlyRootFilesystem"] is True
    assert context["allowPrivilegeEscalation"] is False
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert context["seccompProfile"] == {"type": "RuntimeDefault"}
    namespace = one(base(), "Namespace", NAMESPACE)
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


def test_the_webhook_configuration_covers_both_kinds_and_three_operations() -> None:
    config = one(base(), "ValidatingWebhookConfiguration", "vcflow-webhook")
    covered: dict[tuple[str, str], dict[str, Any]] = {}
    for webhook in config["webhooks"]:
        assert webhook["admissionReviewVersions"] == ["v1"]
        assert webhook["sideEffects"] == "None"
        assert webhook["timeoutSeconds"] == 10
        service = webhook["clientConfig"]["service"]
        assert (service["name"], service["namespace"], service["port"]) == (
            "vcflow-webhook",
            NAMESPACE,
            443,
        )
        for rule in webhook["rules"]:
            assert rule["apiGroups"] == ["flow.volcano.sh"]
            assert rule["apiVersions"] == ["v1alpha1"]
            for resource in rule["resources"]:
                for operation in rule["operations"]:
                    assert (resource, operation) not in covered
                    covered[resource, operation] = webhook
    assert sorted(covered) == sorted(
        (kind, op) for kind in ("jobflows", "jobtemplates") for op in ("CREATE", "UPDATE", "DELETE")
    )
    for (resource, operation), webhook in covered.items():
        path = {"jobflows": "/validate-jobflow", "jobtemplates": "/validate-jobtemplate"}
        assert webhook["clientConfig"]["service"]["path"] == path[resource]
        wanted = "Ignore" if operation == "DELETE" else "Fail"
        assert webhook["failurePolicy"] == wanted, (resource, operation)


def test_the_cert_manager_objects_serve_the_webhook() -> None:
    """cert-manager's kinds, checked by their structure: the Certificate the webhook
    configuration's annotation names, for the Service's DNS names, into the Secret the
    webhook mounts, from the Issuer rendered beside it."""
    objects = cert_manager()
    assert sorted(_name(o) for o in objects) == [
        "Certificate/vcflow-webhook",
        "Issuer/vcflow-selfsigned",
    ]
    for obj in objects:
        assert obj["apiVersion"] == "cert-manager.io/v1"
        assert obj["metadata"]["namespace"] == NAMESPACE
    config = one(base(), "ValidatingWebhookConfiguration", "vcflow-webhook")
    named = config["metadata"]["annotations"]["cert-manager.io/inject-ca-from"]
    namespace, _, name = named.partition("/")
    certificate = one(objects, "Certificate", name)
    assert certificate["metadata"]["namespace"] == namespace
    spec = certificate["spec"]
    assert set(spec) <= {
        "secretName",
        "dnsNames",
        "issuerRef",
        "duration",
        "renewBefore",
        "privateKey",
        "usages",
    }
    assert spec["secretName"] == "vcflow-webhook-tls"
    assert set(spec["dnsNames"]) >= {f"vcflow-webhook.{NAMESPACE}.svc"}
    assert "server auth" in spec["usages"]
    issuer = one(objects, spec["issuerRef"]["kind"], spec["issuerRef"]["name"])
    assert issuer["spec"] == {"selfSigned": {}}


class _Discovery(BaseHTTPRequestHandler):
    """Just enough of an API server's legacy discovery for kubectl to map the CRD kind."""

    DOCS: ClassVar[dict[str, Any]] = {
        "/api": {"kind": "APIVersions", "versions": ["v1"]},
        "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": []},
        "/apis": {
            "kind": "APIGroupList",
            "apiVersion": "v1",
            "groups": [
                {
                    "name": "apiextensions.k8s.io",
                    "versions": [{"groupVersion": "apiextensions.k8s.io/v1", "version": "v1"}],
                    "preferredVersion": {
                        "groupVersion": "apiextensions.k8s.io/v1",
                        "version": "v1",
                    },
                }
            ],
        },
        "/apis/apiextensions.k8s.io/v1": {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": "apiextensions.k8s.io/v1",
            "resources": [
                {
                    "name": "customresourcedefinitions",
                    "singularName": "customresourcedefinition",
                    "namespaced": False,
                    "kind": "CustomResourceDefinition",
                    "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
                    "shortNames": ["crd", "crds"],
                }
            ],
        },
    }

    def do_GET(self) -> None:
        found = self.DOCS.get(self.path.split("?")[0])
        body = json.dumps(found or {"kind": "Status", "code": 404}).encode()
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def discovery() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Discovery)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(10)


def test_kubectl_create_dry_run_prints_the_crds_unchanged(discovery: str) -> None:
    """`kubectl create --dry-run=client -o yaml -f deploy/crds/`: kubectl decodes every CRD
    file and prints each object back as it was written (no field lost or retyped). It maps
    the kind through discovery even in client dry-run, hence the discovery stub; schema
    validation is the test above's (kubectl's own needs the server's OpenAPI)."""
    done = subprocess.run(
        [
            kubectl_binary(),
            "--server",
            discovery,
            "create",
            "--dry-run=client",
            "--validate=false",
            "-o",
            "yaml",
            "-f",
            str(DEPLOY / "crds"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"KUBECONFIG": "/dev/null", "HOME": "/nonexistent"},
    )
    assert done.returncode == 0, done.stderr
    printed = [doc for doc in yaml.safe_load_all(done.stdout) if doc]
    if len(printed) == 1 and printed[0].get("kind") == "List":
        printed = printed[0]["items"]
    written = [crds.definition(kind) for kind in crds.KINDS]
    assert sorted(printed, key=_name) == sorted(written, key=_name)
