"""The contract tests left out on the "kmock" backend (kmock 0.8's KubernetesEmulator
behind a `KubeStore`), and why: each reason names what the emulator does where a
kube-apiserver does otherwise (tests/store/test_kmock.py shows each one by raw requests).
KubeStore is built for the real API server, not bent to the emulator, so nearly the whole
suite is left out: what runs on kmock is what the client decides alone. A test also left
out on "kube" keeps the Kubernetes API's reason (KUBE_CANNOT)."""

from __future__ import annotations

#: a list's resourceVersion is "...", objects carry none: no list-then-watch handshake, so
#: KubeStore.resource_version, events_since, poll and watch cannot start
RV = (
    "kmock keeps no resourceVersion (a list's is '...', objects carry none): "
    "resource_version, events_since and watch cannot start"
)
PUT = (
    "kmock serves no PUT (404 Endpoint Not Found): no update of an object or of its "
    "status subresource, which KubeStore writes by PUT as client-go's Update does"
)
STAMPS = (
    "kmock stamps nothing on create: no uid, resourceVersion, generation, "
    "creationTimestamp, and generateName is not read"
)
ADMISSION = "kmock has no admission: nothing is validated, refused or defaulted"
DRY_RUN = "kmock ignores dryRun=All: apply's dry run writes, so the real write is a 409"
PRECONDITION = "kmock checks no delete precondition (resourceVersion, uid): no 409 Conflict"
NOT_FOUND = "kmock's 404 Status is its own text, not kube's `jobs... \"a\" not found`"
CLOCK = "kmock stamps deletionTimestamp from the wall clock (microseconds), not RFC 3339"
GC = "kmock has no garbage collector: ownerReferences are not read"
BINDING = "kmock serves no pods/binding subresource"
SIZE = (
    "kmock refuses a request body over 1 MiB (aiohttp's limit) with 413; kube-apiserver "
    "takes 3 MiB and etcd refuses objects over 1.5 MiB"
)
SELECTOR = "kmock ignores labelSelector on lists"
CLUSTER_SCOPE = (
    "kmock finds no cluster-scoped object by its URL (`/apis/G/V/queues/NAME`): it keys "
    "every object by a namespace"
)
SLOW = "2,000 creates take minutes on kmock (every create scans every object)"

KMOCK_CANNOT: dict[str, str] = {
    # test_apply.py
    "test_create_runs_admission": ADMISSION,
    "test_flow_spec_update_is_refused": PUT,
    "test_flow_is_checked_against_stored_templates": ADMISSION,
    "test_apply_outcomes": DRY_RUN,
    "test_apply_keeps_status_and_server_metadata": PUT,
    "test_apply_resolves_templates_in_the_batch": DRY_RUN,
    "test_apply_is_all_or_nothing": DRY_RUN,
    "test_apply_reviews_flow_updates": DRY_RUN,
    "test_apply_drops_a_given_status_on_create_and_on_update": PUT,
    # test_burst.py
    "test_refused_writes_leave_the_burst_going": PUT,
    "test_failed_write_takes_no_resource_version_in_a_burst": STAMPS,
    # test_crud.py
    "test_create_sets_server_fields": STAMPS,
    "test_create_ignores_client_server_fields": STAMPS,
    "test_namespace_defaults_and_separates": RV,
    "test_generate_name": STAMPS,
    "test_resource_version_is_store_wide_and_increasing": STAMPS,
    "test_create_existing_is_already_exists": DRY_RUN,
    "test_get_missing_is_not_found": NOT_FOUND,
    "test_returns_copies": RV,
    "test_names_are_those_list_returns_in_one_namespace": RV,
    "test_update_bumps_rv_and_generation_on_spec_change": PUT,
    "test_metadata_update_keeps_generation": PUT,
    "test_noop_update_writes_nothing": PUT,
    "test_update_ignores_status_and_update_status_only_status": PUT,
    "test_update_missing_is_not_found": PUT + " (the 404 it gets is the URL's, not the object's)",
    "test_stale_resource_version_conflicts": PUT,
    "test_uid_precondition": PUT,
    "test_flow_round_trip_is_exact": STAMPS,
    "test_in_place_metadata_mutations_are_written": PUT,
    "test_phase_reads_status_state_phase": PUT,
    # test_delete.py
    "test_delete_precondition": PRECONDITION,
    "test_dependent_with_another_live_owner_stays": RV,
    "test_dependent_with_finalizer_is_only_marked": GC,
    "test_garbage_collection_is_atomic_with_the_delete": GC,
    "test_unfinished_flow_delete_is_refused": PUT,
    "test_template_of_unfinished_flow_stays": PUT,
    # test_fast_status.py
    "test_a_stale_base_gives_the_stored_object": PUT,
    "test_a_base_of_an_object_deleted_and_created_again_is_not_used": PUT,
    "test_the_base_is_left_as_it_was": PUT,
    "test_a_status_write_emits_one_modified_event": PUT,
    "test_an_invalid_status_is_refused_naming_the_field": PUT,
    "test_preconditions_hold_with_a_base": PUT,
    "test_update_status_still_ignores_all_but_the_status": PUT,
    "test_bind_sets_only_the_node_name": BINDING,
    "test_bind_matches_an_update_of_the_node_name_but_the_generation": PUT,
    "test_bind_a_pod_without_a_spec": BINDING,
    "test_bind_with_a_stale_base_gives_the_stored_object": PUT,
    "test_binding_again_to_the_same_node_writes_nothing": BINDING,
    "test_bind_and_a_status_write_with_a_base_chain": BINDING,
    "test_a_status_write_in_a_transaction_with_a_base": PUT,
    "test_a_template_status_write_leaves_its_spec_defaults_as_stored": ADMISSION,
    # test_object_size.py
    "test_a_create_larger_than_the_kubernetes_api_stores_is_refused": SIZE,
    "test_an_update_and_an_apply_are_refused_too_and_nothing_is_half_applied": SIZE,
    "test_an_event_never_carries_a_whole_object": RV,
    "test_a_status_write_past_the_limit_is_refused_and_changes_nothing": SIZE,
    # test_selectors.py
    "test_list_by_label": RV + "; " + SELECTOR,
    "test_label_index_follows_updates_and_deletes": PUT,
    "test_list_many_by_label": SLOW,
    # test_watch.py, test_watch_events.py
    "test_watch_resumes_from_a_resource_version": RV,
    "test_wait_wakes_on_commit_from_another_thread": RV,
    "test_blocking_watch_sees_new_events": RV,
    "test_resume_ahead_of_the_store_is_expired": RV,
    "test_poll_resumes_past_the_kinds_it_does_not_watch": RV,
    "test_watch_skips_other_kinds_without_spinning": RV,
    "test_an_event_is_not_parsed_until_its_object_is_read": RV,
    "test_each_poll_builds_its_own_events": RV,
    # test_cluster_scoped.py
    "test_a_queue_round_trips_without_a_namespace": CLUSTER_SCOPE,
    "test_queue_defaults_are_volcanos": CLUSTER_SCOPE,
    "test_update_status_and_delete_a_queue": CLUSTER_SCOPE,
    "test_apply_creates_then_leaves_unchanged": CLUSTER_SCOPE,
    "test_the_default_queue_cannot_be_deleted": CLUSTER_SCOPE,
    "test_one_global_default_class": ADMISSION,
    "test_a_watch_sees_a_cluster_scoped_object": RV,
}
