"""A notebook's captions written for the project's own data, shown only on it.

A caption that states what the testbed (or a committed example, or a published benchmark) shows is true of that
data and of nothing else: under a researcher's own data it would describe numbers that are not there (issue 79:
"most entries sit in the top bin" printed under data where 67 of 1,255 did). :func:`caption` shows it when every
data parameter it is given is the project's own (:func:`workbench.notebooks.is_project_data`), and otherwise prints
one line saying that the caption is not shown and which data the figure is of.
"""

from __future__ import annotations

import os

from workbench._util.project import is_project_data

#: the line printed in place of a caption under other data (``{data}``: the parameters that are not the project's)
NOT_SHOWN = "(the caption written for the project's own data is not shown here: the data is {data})"


def caption(text: str, *data: str | os.PathLike[str] | None) -> None:
    """Show ``text`` (Markdown) when every one of ``data`` is the project's own data, else one line saying why not.

    Parameters
    ----------
    text : str
        The caption, written for the project's data.
    *data : str or os.PathLike or None
        The notebook's data parameters the figure depends on (None: the default, the project's).
    """
    from IPython import get_ipython
    from IPython.display import Markdown, display

    others = [str(d) for d in data if not is_project_data(d)]
    if others:
        print(NOT_SHOWN.format(data=", ".join(others)))
    elif get_ipython() is None:  # a notebook's script run by python: the text itself
        print(text)
    else:
        display(Markdown(text))


__all__ = ["caption"]
