"""Where the project is, so a notebook gives the same outputs however it is run.

JupyterLab and ``jupyter nbconvert`` start a notebook's kernel in ``notebooks/``, ``workbench figures`` and
papermill in the directory they are called from. A notebook's parameters are paths relative to the project
root (``data/testbed``, ``figures``): a notebook asks :func:`use_project_root` with ``chdir=True`` to make that so
wherever its kernel started (nothing in the library changes the working directory unless asked), and
:func:`figures_dir` decides where a notebook writes: the tracked gallery ``figures/`` only when every data
parameter is the project's own data (under ``data/``), otherwise ``build/figures/<name of the data>/``, so a
user's own sessions never overwrite the gallery. :data:`PROJECT_ROOT` is the one project root every library
default resolves against (the testbed's place, the gallery).
"""

from __future__ import annotations

import os
from pathlib import Path


def find_root(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The project root at or above ``start`` (the current directory): the first directory holding ``notebooks/``
    and ``pyproject.toml`` or ``data/``; None outside a project."""
    here = Path(start if start is not None else Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "notebooks").is_dir() and ((d / "pyproject.toml").is_file() or (d / "data").is_dir()):
            return d
    return None


#: the project this package belongs to (its source checkout): where the testbed, the published numbers and the
#: gallery are, whatever the working directory
PROJECT_ROOT: Path = find_root(Path(__file__).resolve().parent) or Path(__file__).resolve().parents[2]


def use_project_root(*, chdir: bool = False) -> Path:
    """The project root of the working directory (:func:`find_root`; the working directory outside a project).
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
    root = find_root() or Path.cwd()
    if chdir:
        os.chdir(root)
    return root


def is_project_data(path: str | os.PathLike[str] | None) -> bool:
    """Whether ``path`` is absent or the project's own data (under ``data/`` of the project root,
    :func:`use_project_root`: the testbed, the examples, the real-log fixtures)."""
    if path is None:
        return True
    return Path(path).resolve().is_relative_to((use_project_root() / "data").resolve())


def figures_dir(figures: str | os.PathLike[str] | None, *data: str | os.PathLike[str] | None,
                style: str = "gallery") -> Path:
    """Where a notebook writes its figures (and ``tables/`` under it): ``figures`` when it is given; else the
    tracked ``figures/`` of the project root (:func:`use_project_root`) when every data parameter is the project's
    own (:func:`is_project_data`), else its ``build/figures/<name of the first other data>/``. A ``style`` other than
    the gallery's (``paper``) never writes into the gallery: the project's data goes to ``build/figures/<style>/``,
    other data to ``build/figures/<its name>/<style>/``.

    Parameters
    ----------
    figures : str or os.PathLike, optional
        The notebook's ``FIGURES`` parameter.
    *data : str or os.PathLike or None
        The notebook's data parameters.
    style : str, default "gallery"
        The figure style.

    Returns
    -------
    pathlib.Path
        Where the notebook writes.
    """
    if figures is not None:
        return Path(figures)
    other = [Path(d) for d in data if d is not None and not is_project_data(d)]
    root = use_project_root()
    if not other:
        return root / "figures" if style == "gallery" else root / "build" / "figures" / style
    place = root / "build" / "figures" / (other[0].resolve().name or "data")
    return place if style == "gallery" else place / style


__all__ = ["figures_dir", "find_root", "is_project_data", "PROJECT_ROOT", "use_project_root"]
