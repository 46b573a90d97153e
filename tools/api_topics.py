"""Group each package's API page (``docs/api/PACKAGE.rst``) by topic: one section per module behind the package face,
titled by the first words of the module's docstring, opened by an autosummary table of its names, then their
entries; the page starts with every topic's table (the summary scikit-learn's and statsmodels' reference pages open
with). The entries themselves (directive and options) are kept as the page has them.

    .venv/bin/python tools/api_topics.py            # rewrite every package page
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api"
PACKAGES = ("datasets", "adapters", "summaries", "tables", "judges", "llm", "stats", "analyses", "sim", "infer",
            "annotate", "explore", "plots", "notebooks")


def face_map(package: str) -> dict[str, list[str]]:
    """Module (or public submodule, or outside path) -> the face's names from it, in the face's order."""
    tree = ast.parse((ROOT / "workbench" / package / "__init__.py").read_text(encoding="utf-8"))
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "attach")
    mapping: dict[str, list[str]] = ast.literal_eval(call.args[1])
    modules = next((ast.literal_eval(k.value) for k in call.keywords if k.arg == "modules"), [])
    for module in modules:  # a public submodule is a name of its own, first in its topic
        mapping[module] = [module, *(n for n in mapping.get(module, []) if n != module)]
    return mapping


def title(package: str, module: str) -> str:
    """The first sentence of the module's docstring, without its markup, at most about 90 characters."""
    full = module if module.startswith("workbench.") else f"workbench.{package}.{module}"
    doc = (importlib.import_module(full).__doc__ or module).strip()
    first = re.split(r"(?<=[.?!])\s|\n\n", doc, maxsplit=1)[0].replace("\n", " ")
    first = re.sub(r":\w+:`~?([^`]+)`", r"\1", first).replace("``", "").rstrip(".")
    for mark in (": ", " (", ", "):  # its topic: the words before its details
        cut = first.find(mark)
        if 0 < cut <= 70:
            first = first[:cut]
            break
    if len(first) > 70:
        first = first[:70].rsplit(" ", 1)[0] + " ..."
    return first


def blocks(text: str) -> tuple[str, dict[str, str]]:
    """The page's head (up to its ``currentmodule``) and each entry's block by name."""
    head, _, rest = text.partition(".. currentmodule::")
    line, _, body = rest.partition("\n")
    found: dict[str, str] = {}
    for block in re.split(r"\n(?=\.\. auto\w+::)", body):
        m = re.match(r"\.\. auto\w+:: ([\w.]+)", block.strip())
        if m:
            lines = block.strip().splitlines()
            kept = [lines[0]] + list(__import__("itertools").takewhile(lambda ln: ln.startswith("   "), lines[1:]))
            found[m.group(1)] = found[m.group(1).rsplit(".", 1)[-1]] = "\n".join(kept) + "\n"
    return head + ".. currentmodule::" + line + "\n", found


def page(package: str) -> str:
    path = API / f"{package}.rst"
    head, entries = blocks(path.read_text(encoding="utf-8"))
    face = importlib.import_module(f"workbench.{package}")
    public = set(face.__all__)
    topics = []
    for module, names in face_map(package).items():
        shown = [n for n in names if n in public and n in entries]
        if shown:
            topics.append((title(package, module), shown))
    missing = public - {n for _, names in topics for n in names}
    if missing:
        raise SystemExit(f"docs/api/{package}.rst: no entry for {sorted(missing)} (tools/api_pages.py writes one)")
    out = [head.rstrip("\n"), "", "Summary", "-------", ""]
    for heading, names in topics:
        out += [f"**{heading}**", "", ".. autosummary::", "   :nosignatures:", ""]
        out += [f"   {name}" for name in names] + [""]
    for heading, names in topics:
        out += [heading, "-" * len(heading), ""]
        for name in names:
            out += [entries[name].rstrip("\n"), ""]
            if entries[name].startswith(".. automodule::"):  # it sets the current module: set the package's again
                out += [f".. currentmodule:: workbench.{package}", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def main() -> None:
    for package in PACKAGES:
        (API / f"{package}.rst").write_text(page(package), encoding="utf-8")
        print(f"wrote docs/api/{package}.rst")


if __name__ == "__main__":
    main()
