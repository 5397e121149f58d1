"""`vcflow operator`: the JobFlow and JobTemplate controllers of a Kubernetes cluster (see
`operator.process`); its flags, logging, and SIGTERM/SIGINT as a clean stop (the Lease
released, exit 0). Exit 1 when the Lease is lost or the cluster cannot be reached."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Annotated

import typer

from vcflow.api.clock import go_duration
from vcflow.api.errors import InputError
from vcflow.cli import options
from vcflow.operator.limits import DEFAULT_BURST, DEFAULT_QPS
from vcflow.reconcile import schedmode, slatime
from vcflow.reconcile.schedmode import Mode
from vcflow.serving import logs, signals
from vcflow.serving.logs import LogLevel


def operator(
    ctx: typer.Context,
    kubeconfig: options.InClusterKubeconfigOption = None,
    context: options.KubeContextOption = None,
    namespace: Annotated[
        list[str] | None,
        typer.Option("--namespace", "-n", help="Watch only this namespace (repeat; default: all)."),
    ] = None,
    qps: Annotated[
        float,
        typer.Option(
            "--kube-api-qps", help="API requests a second, after the burst (0: no limit)."
        ),
    ] = DEFAULT_QPS,
    burst: Annotated[
        int, typer.Option("--kube-api-burst", help="API requests at once.", min=1)
    ] = DEFAULT_BURST,
    health_addr: Annotated[
        str,
        typer.Option(
            "--health-addr",
            metavar="HOST:PORT",
            help="Where /healthz and /readyz listen, plain HTTP, any address (0: nowhere).",
        ),
    ] = "127.0.0.1:8081",
    metrics_addr: Annotated[
        str,
        typer.Option(
            "--metrics-addr",
            metavar="HOST:PORT",
            help="Where /metrics listens (0: nowhere); non-loopback needs a token and TLS.",
        ),
    ] = "127.0.0.1:8080",
    metrics_token_file: Annotated[
        Path | None,
        typer.Option(
            "--metrics-token-file",
            metavar="FILE",
            help="Bearer token /metrics wants (owner-only file).",
        ),
    ] = None,
    metrics_tls_cert: Annotated[
        Path | None,
        typer.Option("--metrics-tls-cert", metavar="FILE", help="/metrics' TLS certificate (PEM)."),
    ] = None,
    metrics_tls_key: Annotated[
        Path | None,
        typer.Option("--metrics-tls-key", metavar="FILE", help="/metrics' TLS private key (PEM)."),
    ] = None,
    leader_elect: Annotated[
        bool,
        typer.Option(
            "--leader-elect/--no-leader-elect",
            help="Elect one active replica on a coordination.k8s.io Lease.",
        ),
    ] = True,
    lease_name: Annotated[str, typer.Option("--lease-name", help="The Lease's name.")] = (
        "vcflow-operator"
    ),
    lease_namespace: Annotated[
        str | None,
        typer.Option(
            "--lease-namespace", help="The Lease's namespace (default: the pod's, else default)."
        ),
    ] = None,
    lease_duration: Annotated[
        float,
        typer.Option("--lease-duration", help="Seconds a standby waits before taking over."),
    ] = 15.0,
    renew_deadline: Annotated[
        float,
        typer.Option("--renew-deadline", help="Seconds the leader may fail to renew, then exits."),
    ] = 10.0,
    retry_period: Annotated[
        float, typer.Option("--retry-period", help="Seconds between two lease tries.")
    ] = 2.0,
    label_pods: Annotated[
        bool,
        typer.Option(
            "--label-pods/--no-label-pods",
            help="Put the createdByJobFlow/createdByJobTemplate labels of flows' vcjobs on "
            "their pods (needs patch on pods).",
        ),
    ] = True,
    scheduling_mode: Annotated[
        Mode,
        typer.Option(
            "--scheduling-mode",
            help="How vcjobs meet vc-scheduler: auto reads volcano-system/"
            "volcano-scheduler-configmap (sla when its sla plugin is on, else priority "
            "when --priority-ladder is given, else none).",
        ),
    ] = Mode.AUTO,
    sla_budget: Annotated[
        str,
        typer.Option(
            "--sla-budget",
            metavar="DURATION",
            help="sla mode: a flow's deadline after its creation.",
        ),
    ] = go_duration(slatime.DEFAULT_BUDGET),
    sla_floor: Annotated[
        str,
        typer.Option(
            "--sla-floor", metavar="DURATION", help="sla mode: the least waiting time of a vcjob."
        ),
    ] = go_duration(slatime.DEFAULT_FLOOR),
    priority_ladder: Annotated[
        str | None,
        typer.Option(
            "--priority-ladder",
            metavar="LOW,...,HIGH",
            help="priority mode: PriorityClasses a flow's pending vcjobs climb as it ages.",
        ),
    ] = None,
    ladder_step: Annotated[
        str,
        typer.Option(
            "--ladder-step", metavar="DURATION", help="priority mode: a flow's age per rung."
        ),
    ] = "10m",
    log_level: Annotated[LogLevel, typer.Option("--log-level")] = LogLevel.INFO,
) -> None:
    """Run the JobFlow and JobTemplate controllers against a Kubernetes cluster.

    Volcano's job controller and scheduler run the vcjobs they create. Replicas elect one
    leader on a Lease; the others wait and take over when it dies. SIGTERM stops cleanly.
    """
    # (the Kubernetes client is loaded only by the commands that talk to a cluster)
    from vcflow.operator import process
    from vcflow.operator.election import Timing
    from vcflow.operator.endpoints import parse_address, served

    sla = slatime.Policy(
        budget=options.duration(sla_budget, "--sla-budget"),
        floor=options.duration(sla_floor, "--sla-floor"),
    )
    if sla.floor < 1:
        raise typer.BadParameter("must be at least 1s", param_hint="--sla-floor")
    ladder = None
    if priority_ladder is not None:
        classes = tuple(c.strip() for c in priority_ladder.split(","))
        step = options.duration(ladder_step, "--ladder-step")
        problem = schedmode.ladder_problem(classes, step)
        if problem is not None:
            flag, _, why = problem.partition(": ")
            raise typer.BadParameter(why, param_hint=flag)
        ladder = schedmode.Ladder(classes, step)
    elif scheduling_mode is Mode.PRIORITY:
        raise typer.BadParameter("needs --priority-ladder", param_hint="--scheduling-mode priority")
    timing = Timing(lease_duration, renew_deadline, retry_period)
    problems = timing.problems() if leader_elect else []
    if problems:
        raise typer.BadParameter("; ".join(problems))
    for flag, address in (("--health-addr", health_addr), ("--metrics-addr", metrics_addr)):
        if served(address):
            try:
                parse_address(address, flag)
            except InputError as exc:
                raise typer.BadParameter(str(exc)) from None
    logs.configure(log_level.value, logs.STAMPED)
    kubeconfig, context = options.in_cluster_target(ctx, kubeconfig, context)
    settings = process.Settings(
        kubeconfig=kubeconfig,
        context=context,
        namespaces=tuple(namespace or ()),
        qps=qps,
        burst=burst,
        health_addr=health_addr,
        metrics_addr=metrics_addr,
        metrics_token_file=metrics_token_file,
        metrics_tls_cert=metrics_tls_cert,
        metrics_tls_key=metrics_tls_key,
        leader_elect=leader_elect,
        lease_name=lease_name,
        lease_namespace=lease_namespace,
        timing=timing,
        label_pods=label_pods,
        scheduling_mode=scheduling_mode,
        sla=sla,
        ladder=ladder,
    )
    stopping = threading.Event()
    with signals.setting(stopping):
        code = process.run(settings, stopping)
    raise typer.Exit(code)
