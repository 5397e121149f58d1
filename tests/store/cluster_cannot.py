"""The contract tests left out on the "cluster" backend (a `KubeStore` on the session's
real kube-apiserver v1.37.2 + etcd 3.7.3, vcflow's CRDs and webhook installed:
clusterbackend.py), and why: each reason names what a real API server does that the
test's promise, as written, cannot meet there. A test also left out on "kube" keeps the
Kubernetes API's reason (KUBE_CANNOT). What the store does promise there instead — the
same behaviour with the cluster's resourceVersions, the garbage collector's delay — is
tested in tests/store/test_cluster.py."""

from __future__ import annotations

#: the test names resourceVersions: 1 for the first write, one more for each write after
RVS = (
    "resourceVersions are etcd's revisions, shared by the whole cluster: a test's first "
    "write is not 1 and its writes are not numbered one after the other (other clients "
    "write meanwhile); test_cluster.py checks the same writes by their order"
)
#: the test reads `events_since(0)` (or from a small resourceVersion) as the store's history
HISTORY = (
    "a watch from resourceVersion 0 starts with every current object of the kinds read, "
    "cluster-wide (kube-system's ConfigMaps and Leases, the nodes' Events...), not the "
    "test's writes, and one from a small resourceVersion (1, 5) is long compacted (410 "
    "Gone); test_cluster.py reads the events after the resourceVersion a test starts at"
)
#: the test reads right after the delete of an owner
GC = (
    "kube-controller-manager's garbage collector deletes (or marks) the dependents after "
    "the owner's DELETE has returned, not in the same write; test_cluster.py waits for it"
)
#: a Pod without containers
BARE_POD = (
    "kube-apiserver refuses a Pod without containers (spec.containers: Required value), "
    "admit=False or not (the store cannot skip the server's validation); vcflow server "
    "stores it"
)
#: etcd's limit
SIZE = (
    "etcd, not admission, refuses the write: kube-apiserver answers a 500 'etcdserver: "
    "request is too large' (ValidationFailed with its own words, test_cluster.py), and "
    "the test's events_since(0) is the cluster's objects (see HISTORY)"
)

CLUSTER_CANNOT: dict[str, str] = {
    # test_apply.py
    "test_create_runs_admission": RVS + " (resource_version() == 0 for an empty store)",
    "test_apply_outcomes": RVS,
    "test_apply_is_all_or_nothing": RVS + "; " + HISTORY,
    # test_burst.py
    "test_refused_writes_leave_the_burst_going": HISTORY,
    "test_failed_write_takes_no_resource_version_in_a_burst": RVS,
    # test_crud.py
    "test_create_sets_server_fields": (
        RVS + "; and the server stamps creationTimestamp with its clock, not the test's"
    ),
    "test_create_ignores_client_server_fields": RVS,
    "test_resource_version_is_store_wide_and_increasing": RVS,
    "test_update_bumps_rv_and_generation_on_spec_change": RVS,
    "test_metadata_update_keeps_generation": RVS,
    "test_noop_update_writes_nothing": RVS,
    "test_an_internal_create_keeps_the_status_and_so_does_a_pod": BARE_POD,
    # test_delete.py
    "test_delete_precondition": RVS + " (it deletes at resourceVersion 1)",
    "test_dependent_with_another_live_owner_stays": GC,
    "test_dependent_with_finalizer_is_only_marked": GC,
    "test_garbage_collection_is_atomic_with_the_delete": (
        GC + "; its delete is another write, whatever else the cluster writes between (it "
        "passes when nothing does: by chance)"
    ),
    # test_fast_status.py
    "test_the_base_is_left_as_it_was": RVS,
    "test_a_status_write_emits_one_modified_event": HISTORY,
    "test_an_invalid_status_is_refused_naming_the_field": (
        "a Pod is a built-in kind: kube-apiserver decodes the patched object into its Go "
        "types and refuses a field of the wrong type as one 'patch: Invalid value' cause "
        "quoting the whole object, not one cause per field as a CRD's schema (and vcflow "
        "server) says it"
    ),
    "test_preconditions_hold_with_a_base": (
        RVS + " (the test writes at resourceVersion 1); the uid precondition is in test_cluster.py"
    ),
    "test_bind_sets_only_the_node_name": (
        RVS + "; and kube-apiserver's binding also sets the pod's PodScheduled condition "
        "(vcflow's stores set spec.nodeName alone)"
    ),
    "test_bind_matches_an_update_of_the_node_name_but_the_generation": (
        "kube-apiserver refuses a Pod update that changes spec.nodeName (pod updates may "
        "not change fields other than the images, activeDeadlineSeconds, tolerations...: "
        "only pods/binding places a pod); vcflow server takes it. And the twin stores "
        "share one cluster, whose uids the test cannot choose"
    ),
    "test_bind_a_pod_without_a_spec": BARE_POD,
    "test_bind_with_a_stale_base_gives_the_stored_object": (
        "kube-apiserver's binding also sets the pod's PodScheduled condition, so the bound "
        "pod's status is not the one written before it (vcflow's stores set spec.nodeName "
        "alone)"
    ),
    "test_binding_again_to_the_same_node_writes_nothing": (
        RVS + "; the binding again is answered by the pod (test_cluster.py)"
    ),
    "test_bind_and_a_status_write_with_a_base_chain": RVS,
    "test_a_status_write_in_a_transaction_with_a_base": RVS,
    # test_object_size.py
    "test_a_create_larger_than_the_kubernetes_api_stores_is_refused": SIZE,
    "test_an_update_and_an_apply_are_refused_too_and_nothing_is_half_applied": SIZE,
    "test_a_status_write_past_the_limit_is_refused_and_changes_nothing": SIZE,
    # test_watch.py, test_watch_events.py
    "test_watch_resumes_from_a_resource_version": HISTORY,
    "test_resume_ahead_of_the_store_is_expired": (
        HISTORY + " (resourceVersion 5 is behind the cluster's, not ahead)"
    ),
    "test_poll_resumes_past_the_kinds_it_does_not_watch": RVS,
    "test_an_event_is_not_parsed_until_its_object_is_read": HISTORY,
    "test_each_poll_builds_its_own_events": HISTORY,
    # test_cluster_scoped.py
    "test_queue_defaults_are_volcanos": (
        "Volcano's defaults (weight 1, reclaimable) are its mutating webhook's, which the "
        "store's cluster does not run (its Queue CRD only)"
    ),
    "test_apply_creates_then_leaves_unchanged": (
        "the store's cluster runs no Volcano mutating webhook, so a Queue is stored without "
        "the `reclaimable: true` the client's defaulter expects: applied again it differs"
    ),
    "test_the_default_queue_cannot_be_deleted": (
        "the refusal is Volcano's validating webhook's, which the store's cluster does not run"
    ),
}
