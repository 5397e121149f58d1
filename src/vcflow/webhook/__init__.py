"""Tier 7: `vcflow webhook`, the validating admission webhook of a cluster: kube-apiserver's
AdmissionReview v1 for JobFlows and JobTemplates answered with the embedded admission rules
(`store.admit`), over HTTPS, the cluster read through a `kubestore.KubeStore`."""
