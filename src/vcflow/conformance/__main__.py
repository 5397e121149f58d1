"""`python -m vcflow.conformance [-v] PATH...`: run the case files (directories searched
recursively for *.yaml) and print the report. Exit 0 when no case failed, 1 when one did,
2 on a usage error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from vcflow.conformance import report
from vcflow.conformance.cases import UsageError, discover
from vcflow.conformance.runner import run_files

PROG = "python -m vcflow.conformance"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description="Run vcflow conformance cases.")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="case file or directory")
    parser.add_argument("-v", "--verbose", action="store_true", help="list passing cases too")
    args = parser.parse_args(argv)
    try:
        files = discover(args.paths)
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    outcomes = run_files(files)
    for line in report.render(outcomes, verbose=args.verbose):
        print(line)
    return 1 if report.any_failed(outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
