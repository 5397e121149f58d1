"""`python -m vcflow` runs the CLI."""

from vcflow.cli.app import main

main()
