"""Tier 4 shell: the local vcjob runtime (gang scheduler, job lifecycle, pod processes, logs;
the processes that run the pods are `vcflow.podserver`'s).

Built by the vcjob-runtime and local-execution issues; it meets the controllers only through
the store."""
