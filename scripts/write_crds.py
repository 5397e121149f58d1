"""Write the CRDs generated from the models (`vcflow.kubeapi.crds`) into a folder, by default
`deploy/crds/`: `python scripts/write_crds.py [DIR]`. Run it after changing a model;
tests/kubeapi/test_crds.py fails while the committed files differ from the generator's.
"""

from __future__ import annotations

import sys
from pathlib import Path

from vcflow.kubeapi import crds


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        print("usage: python scripts/write_crds.py [DIR]", file=sys.stderr)
        return 2
    folder = Path(argv[0]) if argv else Path(__file__).resolve().parents[1] / "deploy" / "crds"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in crds.files().items():
        (folder / name).write_text(text, encoding="utf-8")
        print(folder / name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
