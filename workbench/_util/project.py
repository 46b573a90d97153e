"""Where the project is, so a notebook gives the same outputs however it is run.

JupyterLab and ``jupyter nbconvert`` start a notebook's kernel in ``notebooks/``, ``workbench figures`` and
papermill in the directory they are called from. The rule: a notebook's parameters are paths relative to the
project root -- the project around the working directory, or, outside any project (papermill run from ``/tmp``),
the checkout this package belongs to. A notebook asks :func:`use_project_root` with ``chdir=True`` to make that so
wherever its kernel started (nothing in the library changes the working directory unless asked), and
:func:`figures_dir` decides where a notebook writes, under the same root: the tracked gallery ``figures/`` only
when every input is the project's own data (under ``data/``), otherwise
``build/figures/<name of the data>-<hash of every input>/`` with an ``inputs.json`` saying what they were, so a
user's own data never overwrites the gallery and results of different inputs never overwrite each other. :data:`PROJECT_ROOT` is the one project root every library
default resolves against (the testbed's place, the gallery).
"""

from __future__ import annotations

import os
from pathlib import Path

#: the example logs shipped as package data (:func:`workbench.datasets.examples` returns them)
EXAMPLES = Path(__file__).resolve().parents[1] / "datasets" / "example_logs"


def find_root(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The project root at or above ``start`` (the current directory): the first directory holding ``notebooks/``
    and ``pyproject.toml`` or ``data/``; None outside a project.

    Parameters
    ----------
    start : str or os.PathLike, optional
        Where to look from (default: the current directory).

    Returns
    -------
    pathlib.Path or None
        The root.
    """
    here = Path(start if start is not None else Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "notebooks").is_dir() and ((d / "pyproject.toml").is_file() or (d / "data").is_dir()):
            return d
    return None


#: the project this package belongs to (its source checkout): where the testbed, the published numbers and the
#: gallery are, whatever the working directory
PROJECT_ROOT: Path = find_root(Path(__file__).resolve().parent) or Path(__file__).resolve().parents[2]


def use_project_root(*, chdir: bool = False) -> Path:
    """The project root of the working directory (:func:`find_root`); outside a project, the checkout this package
    belongs to (:data:`PROJECT_ROOT`), or the working directory for an installed package.
    With ``chdir`` (what a notebook asks for in its first cell) the process moves there, so every relative
    parameter (``DATA``, ``FIGURES``, ``data/published/...``) means the same thing from ``notebooks/``, from the
    root or from a subdirectory; without it nothing changes.

    Parameters
    ----------
    chdir : bool, default False
        Move the process to the root.

    Returns
    -------
    pathlib.Path
        The project root.
    """
    root = find_root() or (PROJECT_ROOT if (PROJECT_ROOT / "notebooks").is_dir() else Path.cwd())
    if chdir:
        os.chdir(root)
    return root


def is_project_data(path: str | os.PathLike[str] | None) -> bool:
    """Whether ``path`` is absent or the project's own data (under ``data/`` of the project root,
    :func:`use_project_root`: the testbed, the real-log fixtures; or the example logs the package ships).

    Parameters
    ----------
    path : str or os.PathLike, optional
        A notebook's data parameter.

    Returns
    -------
    bool
        True for None, a path under the project's ``data/``, or one of the package's examples.
    """
    if path is None:
        return True
    resolved, root = Path(path).resolve(), use_project_root()
    own = (root / "data", root / "workbench" / "datasets" / "example_logs", EXAMPLES)  # (a copy of the project's too)
    return any(resolved.is_relative_to(place.resolve()) for place in own)


def figures_dir(figures: str | os.PathLike[str] | None, *data: str | os.PathLike[str] | None,
                style: str = "gallery", **inputs: object) -> Path:
    """Where a notebook writes its figures (and ``tables/`` under it): ``figures`` when it is given; else the
    tracked ``figures/`` of the project root (:func:`use_project_root`) when every data parameter is the project's
    own (:func:`is_project_data`) and no other input is given, else
    ``build/figures/<name of the first other data>-<hash>/``, the first 16 hexadecimal characters of the SHA-256
    of every data path (resolved) and every
    ``inputs`` value that is not None (a target, a judge: what decides the results besides the data), with those
    inputs in its ``inputs.json``, which is compared with the inputs before the directory is used (on a collision the
    full digest names it). A ``style`` other than the gallery's (``paper``) never writes into the gallery: the
    project's data goes to ``build/figures/<style>/``, other inputs to ``build/figures/<name>-<hash>/<style>/``.

    Parameters
    ----------
    figures : str or os.PathLike, optional
        The notebook's ``FIGURES`` parameter.
    *data : str or os.PathLike or None
        The notebook's data parameters.
    style : str, default "gallery"
        The figure style.
    **inputs : object
        Other inputs that decide the results (None: the default, not counted).

    Returns
    -------
    pathlib.Path
        Where the notebook writes.
    """
    place = _figures_dir(figures, *data, style=style, **inputs)
    said_where(place)
    return place


def label_files(path: str | os.PathLike[str]) -> list[Path]:
    """The label files a data directory holds, in path order: its annotation store's ``labels/`` files, a store
    root's own ``labels/``, a ``labels.parquet`` table (none for a path that is not a directory)."""
    root = Path(path)
    if not root.is_dir():
        return []
    files = sorted(f for place in (root / "annotations" / "labels", root / "labels") if place.is_dir()
                   for f in place.rglob("*") if f.is_file())
    return files + [f for f in (root / "labels.parquet",) if f.is_file()]


def labels_digest(path: str | os.PathLike[str]) -> str | None:
    """The SHA-256 of the labels a data directory holds (its annotation store's ``labels/`` files, a store root's
    own ``labels/``, or a ``labels.parquet`` table: every file's relative path and bytes, in path order), or None
    where it holds none. Part of :func:`figures_dir`'s hash, so results computed before labels were added are not
    overwritten by those computed after (issue 79)."""
    import hashlib

    root = Path(path)
    files = label_files(root)
    if not files:
        return None
    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(root)).encode("utf-8") + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


#: the MIME type of the record :func:`said_where` displays (``workbench figures`` reports each notebook's)
FIGURES_MIME = "application/vnd.workbench.figures+json"


def said_where(place: Path) -> None:
    """Display where a notebook writes (a line a reader sees, and a record ``workbench figures`` reports); nothing
    outside a kernel."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython is a dependency
        return
    if get_ipython() is None:
        return
    full = place.resolve()
    root = use_project_root()
    shown = full.relative_to(root) if full.is_relative_to(root) else full  # the gallery's: figures/, no machine path
    display({"text/plain": f"figures and tables: {shown}/", FIGURES_MIME: {"figures": str(full)}}, raw=True)


def _figures_dir(figures: str | os.PathLike[str] | None, *data: str | os.PathLike[str] | None,
                 style: str = "gallery", **inputs: object) -> Path:
    """:func:`figures_dir`'s rule, without saying where."""
    if figures is not None:
        return Path(figures)
    import hashlib
    import json

    other = [Path(d) for d in data if d is not None and not is_project_data(d)]
    given = {name: value for name, value in sorted(inputs.items()) if value is not None}
    root = use_project_root()
    if not other and not given:
        return root / "figures" if style == "gallery" else root / "build" / "figures" / style
    said: dict[str, object] = {"data": [None if d is None else str(Path(d).resolve()) for d in data],
                               **{k: str(v) for k, v in given.items()}}
    held = {str(Path(d).resolve()): digest for d in other if (digest := labels_digest(d)) is not None}
    if held:  # labels added to a data set's own store are new inputs: their results go to a folder of their own
        said["labels"] = held
    digest = hashlib.sha256(json.dumps(said, sort_keys=True).encode("utf-8")).hexdigest()
    name = (other[0].resolve().name if other else "data") or "data"
    for key in (digest[:HASH_CHARS], digest):  # 8 characters once collided (a pair found in 71,342 tries)
        place = root / "build" / "figures" / f"{name}-{key}"
        place.mkdir(parents=True, exist_ok=True)
        manifest = place / "inputs.json"
        try:
            kept = json.loads(manifest.read_text(encoding="utf-8"))
        except FileNotFoundError:
            from workbench._util.atomic import atomic_write

            atomic_write(manifest, lambda tmp: tmp.write_text(json.dumps(said, indent=1) + "\n", encoding="utf-8"))
            break
        except ValueError:
            kept = None
        if kept == said:  # the directory of these very inputs (its manifest compared, not only its name)
            break
    else:
        from workbench.errors import SchemaError

        raise SchemaError(f"holds the figures of other inputs under the same hash ({manifest}); move it aside",
                          file=str(place))
    return place if style == "gallery" else place / style


#: hexadecimal characters of the inputs' SHA-256 in a figures directory's name (the full digest if they collide)
HASH_CHARS = 16


__all__ = ["figures_dir", "find_root", "is_project_data", "label_files", "labels_digest", "PROJECT_ROOT",
           "use_project_root"]
