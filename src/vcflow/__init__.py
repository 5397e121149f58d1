"""vcflow: Volcano's JobFlow — declarative DAGs of batch jobs — embedded or on Kubernetes."""

__version__ = "0.1.0"

__all__ = ["__version__"]
