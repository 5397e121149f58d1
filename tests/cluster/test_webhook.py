"""`vcflow webhook` registered with kube-apiserver v1.37 through deploy/'s
ValidatingWebhookConfiguration (its clientConfig patched to the process's 127.0.0.1 URL and
the caBundle of the test CA), reading the cluster as the user `vcflow-webhook` with the RBAC
of deploy/rbac/webhook.yaml. What users see through kubectl: vcflow's refusals (a cycle, a
delete of an unfinished flow or of a template it uses, a spec update), its warnings on an
admitted flow, creates failing closed and deletes failing open while it does not answer."""

from __future__ import annotations

import json
import socket

from tests.cluster.deployed import (
    SYSTEM,
    WEBHOOK_CONFIG,
    Deployed,
    Scene,
    client_config_patch,
    jobflow,
    manifest,
    template,
)

CYCLE = "spec.flows[0].dependsOn.targets: jobflow Flow is not DAG: cycle a → b → a"


def cyclic() -> dict[str, object]:
    flow = jobflow("loop", "a<b", "b<a")
    return flow


def test_deploy_applies_as_it_is_and_creates_fail_closed_until_the_webhook_answers(
    deployed: Deployed, scene: Scene
) -> None:
    """`kubectl apply -k deploy/` made every object on this control plane; before the
    webhook configuration was patched to the process, a JobFlow create failed closed
    (failurePolicy Fail) with kube-apiserver's `failed calling webhook`."""
    for line in (
        "namespace/vcflow-system",
        "customresourcedefinition.apiextensions.k8s.io/jobflows.flow.volcano.sh",
        "clusterrole.rbac.authorization.k8s.io/vcflow-operator",
        "deployment.apps/vcflow-webhook",
        "service/vcflow-webhook",
        "poddisruptionbudget.policy/vcflow-webhook",
        "validatingwebhookconfiguration.admissionregistration.k8s.io/vcflow-webhook",
    ):
        assert line in deployed.applied, deployed.applied
    assert 'failed calling webhook "jobflows.validate.vcflow.io"' in deployed.refused_before
    config = json.loads(
        scene.kubectl.ok("get", "validatingwebhookconfiguration", WEBHOOK_CONFIG, "-o", "json")
    )
    urls = [w["clientConfig"]["url"] for w in config["webhooks"]]
    assert urls == [
        f"{deployed.webhook_url}/validate-jobflow",
        f"{deployed.webhook_url}/validate-jobtemplate",
        f"{deployed.webhook_url}/validate-jobflow",
        f"{deployed.webhook_url}/validate-jobtemplate",
    ]
    replicas = scene.kubectl.ok(
        "-n", SYSTEM, "get", "deployment", "-o", "jsonpath={.items[*].spec.replicas}"
    )
    assert replicas.split() == ["0", "0"]


def test_a_cyclic_flow_is_refused_with_vcflows_message(scene: Scene) -> None:
    refused = scene.kubectl.run("-n", scene.namespace, "apply", "-f", "-", input=manifest(cyclic()))
    assert refused.returncode == 1
    assert (
        'admission webhook "jobflows.validate.vcflow.io" denied the request: ' + CYCLE
        in refused.stderr
    ), refused.stderr
    assert "loop" not in scene.kubectl.ok("-n", scene.namespace, "get", "jf", "-o", "name")
    line = f"JobFlow CREATE {scene.namespace}/loop allowed=false (422)"
    scene.wait(lambda: line in scene.deployed.webhook.output(), "the webhook's log line")


def test_a_valid_flow_is_admitted_with_its_warnings_and_a_spec_update_refused(
    scene: Scene,
) -> None:
    shown = scene.kubectl.run(
        "-n",
        scene.namespace,
        "apply",
        "-f",
        "-",
        input=manifest(template("a"), jobflow("ok", "a", "zz<a")),
    )
    assert shown.returncode == 0, shown.stderr
    assert "jobflow.flow.volcano.sh/ok created" in shown.stdout
    assert (
        'Warning: spec.flows[1].name: JobTemplate "zz" not found; the entry will wait '
        "(TemplateNotFound) until it is created" in shown.stderr
    )
    patched = scene.kubectl.run(
        "-n",
        scene.namespace,
        "patch",
        "jf",
        "ok",
        "--type=merge",
        "-p",
        '{"spec":{"flows":[{"name":"a"}]}}',
    )
    assert patched.returncode == 1
    assert "spec: jobflow spec updates are not supported" in patched.stderr


def test_a_running_flow_and_its_templates_are_not_deleted_until_it_is_stopped(
    scene: Scene,
) -> None:
    """The DELETE webhooks: `kubectl delete` of a Running flow and of the template it uses
    are refused with vcflow's words (what to do instead); once `vcflow stop` has failed the
    flow, both deletes go through."""
    scene.operator()
    namespace = scene.namespace
    scene.apply(template("long", run_seconds=600), jobflow("busy", "long"))
    scene.wait(lambda: scene.job_phase("busy-long") == "Running", "vcjob busy-long Running")
    # (the webhook names the phase the flow's status shows, which follows its vcjob's)
    scene.wait_phase("busy", "Running")
    refused = scene.kubectl.run("-n", namespace, "delete", "jf", "busy")
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): admission webhook "jobflows.delete.vcflow.io" denied '
        'the request: cannot delete JobFlow "busy" while it is Running: stop it first (vcflow '
        f"stop jobflow busy -n {namespace}), which terminates its jobs, then delete it"
    )
    used = scene.kubectl.run("-n", namespace, "delete", "jt", "long")
    assert used.returncode == 1
    assert (
        'cannot delete JobTemplate "long": unfinished JobFlow(s) busy use it; stop or delete '
        "them first" in used.stderr
    )
    scene.vcflow.ok("stop", "jobflow", "busy", "-n", namespace)
    scene.wait_phase("busy", "Failed")
    scene.kubectl.ok("-n", namespace, "delete", "jf", "busy")
    scene.kubectl.ok("-n", namespace, "delete", "jt", "long")
    # its reads of the cluster (the flows using a template) with deploy/'s read-only RBAC
    assert "Forbidden" not in scene.deployed.webhook.output()


def test_while_the_webhook_does_not_answer_creates_fail_and_deletes_go_through(
    deployed: Deployed, scene: Scene
) -> None:
    """deploy/'s failure policies on the real API server: with the configuration pointed at
    a port nothing listens on, a create is refused (`failed calling webhook`) and the delete
    of an unfinished flow, which the webhook refuses, goes through (failurePolicy Ignore).
    Then pointed back."""
    namespace = scene.namespace
    scene.apply(template("a"), jobflow("pending", "zz"))
    phase = '{"status":{"state":{"phase":"Pending"}}}'  # (no operator: it stays so)
    scene.kubectl.ok(
        "-n",
        namespace,
        "patch",
        "jf",
        "pending",
        "--subresource=status",
        "--type=merge",
        "-p",
        phase,
    )
    kept = scene.kubectl.run("-n", namespace, "delete", "jf", "pending", "--dry-run=server")
    assert kept.returncode == 1 and 'cannot delete JobFlow "pending"' in kept.stderr
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        closed = f"https://127.0.0.1:{free.getsockname()[1]}"
    stored = json.loads(
        scene.kubectl.ok("get", "validatingwebhookconfiguration", WEBHOOK_CONFIG, "-o", "json")
    )
    patch = json.dumps(client_config_patch(stored, closed, deployed.ca_pem))
    scene.kubectl.ok(
        "patch", "validatingwebhookconfiguration", WEBHOOK_CONFIG, "--type=json", "-p", patch
    )
    try:
        text = manifest(jobflow("late", "a"))

        def refused() -> str:
            done = scene.kubectl.run(
                "-n", namespace, "create", "--dry-run=server", "-f", "-", input=text
            )
            return done.stderr if done.returncode else ""

        said = scene.wait(refused, "creates to fail closed")
        assert 'failed calling webhook "jobflows.validate.vcflow.io"' in said
        assert "connection refused" in said
        scene.kubectl.ok("-n", namespace, "delete", "jf", "pending")
    finally:
        back = json.dumps(client_config_patch(stored, deployed.webhook_url, deployed.ca_pem))
        scene.kubectl.ok(
            "patch", "validatingwebhookconfiguration", WEBHOOK_CONFIG, "--type=json", "-p", back
        )
    scene.wait(
        lambda: (
            scene.kubectl.run(
                "-n", namespace, "create", "--dry-run=server", "-f", "-", input=text
            ).returncode
            == 0
        ),
        "the webhook to answer again",
    )
