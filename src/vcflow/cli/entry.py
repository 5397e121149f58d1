"""The `vcflow` command's entry point. It loads the CLI itself, so that Ctrl-C while the CLI
loads (most of a second: the models, the controllers) ends the command as Ctrl-C does
later, with exit 130 and no traceback."""

from __future__ import annotations

import sys

#: the exit code of a command ended by Ctrl-C (128 + SIGINT), as a shell reports it
INTERRUPTED = 130


def main() -> None:
    try:
        from vcflow.cli.app import main as run  # (the slow part)
    except KeyboardInterrupt:
        sys.exit(INTERRUPTED)
    run()
