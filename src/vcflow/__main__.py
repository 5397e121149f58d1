"""`python -m vcflow` runs the CLI."""

from vcflow.cli.entry import main

main()
