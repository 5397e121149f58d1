"""The Kubernetes API's conventions at the level of its JSON, each written once: Status
objects and the errors they stand for (`status`), `fieldValidation` (`fieldvalidation`),
admission warnings as a response's texts (`warningtext`) and watch streams' frames
(`watchframes`). Pure: imports `vcflow.api` and the standard library only, so the server,
its clients (`kubestore`, `operator`) and the webhook share them.
"""
