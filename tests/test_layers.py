"""The layers are written down three times — import-linter's contract in pyproject.toml
(the one that is enforced), each package's docstring (`Tier N`) and README's Layout
picture — and the two descriptions must say what the contract says."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = REPO / "src" / "vcflow"


def layers() -> list[list[str]]:
    """The "Layers point one way" contract, bottom tier first, as package names."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [
        [name.strip().removeprefix("vcflow.") for name in layer.split("|")]
        for layer in reversed(contract["layers"])
    ]


def test_every_package_is_in_a_layer() -> None:
    packaged = {p.parent.name for p in PACKAGES.glob("*/__init__.py")}
    assert packaged == {name for layer in layers() for name in layer}


def test_package_docstrings_name_their_tier() -> None:
    wrong = {}
    for tier, layer in enumerate(layers()):
        for name in layer:
            module = ast.parse((PACKAGES / name / "__init__.py").read_text())
            doc = ast.get_docstring(module) or ""
            said = re.match(r"Tier (\d+)\b", doc)
            if said is None or int(said.group(1)) != tier:
                wrong[name] = (said.group(0) if said else doc[:30], f"Tier {tier}")
    assert wrong == {}


def test_readme_layout_lists_the_layers_top_down() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Layout", 1)[1]
    picture = section.split("```", 2)[1].strip().splitlines()
    drawn = [line.split("  ", 1)[0].strip() for line in picture if line.strip()]
    assert drawn == [" | ".join(layer) for layer in reversed(layers())]
