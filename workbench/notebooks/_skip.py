"""A notebook part that does not apply to the data is skipped with its reason, under every executor.

An analysis that meets data without what it needs raises :class:`~workbench.datasets.NotApplicable`. Raised in a
cell, that is an error, and papermill and nbconvert stop there and fail the run; only ``workbench figures`` knew to
call it a skip. :func:`skip_when_not_applicable` (a notebook's setup cell calls it) makes the kernel itself treat it
as a skip, so papermill, nbconvert, JupyterLab's "Run All" and ``workbench figures`` agree:

- the cell that raised it ends there, successfully, and shows the reason as an :class:`~workbench.notebooks.Analyses`
  record (``skipped: PART (reason)``), which ``workbench figures`` lists;
- every later cell of the same *part* runs as an empty cell. A part is the stretch of cells up to the next code cell
  whose first line is ``# part: NAME`` (a notebook section that does not need what the skipped one needed), or up to
  a parameters cell (first line ``# Parameters``, which papermill's injected cell shares), so running the notebook
  again with other parameters starts afresh.

Any other exception is an error as before.
"""

from __future__ import annotations

import ast

from workbench.notebooks._runner import Analyses, FIRST_PART

#: The first line of a cell that starts a new part (the rest of the line is the part's name).
PART_MARK = "# part:"
#: The first line of a parameters cell (the notebook's own, and the one papermill injects).
PARAMETERS_MARK = "# Parameters"

_HANDLER = "__workbench_not_applicable__"


class _State:
    """The kernel's skipping state: the part being run, and the reason its rest is skipped (None: not skipping)."""

    def __init__(self) -> None:
        self.part = FIRST_PART
        self.reason: str | None = None
        self.analyses = Analyses()

    def skip(self, err: BaseException) -> None:
        self.reason = str(err)
        self.analyses.skipped(self.part, self.reason, part=True)

    def lines(self, lines: list[str]) -> list[str]:
        """IPython's cleanup transform: a cell of a skipped part becomes empty; a part or parameters cell ends it."""
        first = next((line.strip() for line in lines if line.strip()), "")
        if first.startswith(PART_MARK):
            self.part, self.reason = first[len(PART_MARK):].strip() or FIRST_PART, None
        elif first.startswith(PARAMETERS_MARK):
            self.part, self.reason = FIRST_PART, None
        return [] if self.reason is not None else lines


class _CatchNotApplicable(ast.NodeTransformer):
    """Wraps a cell's statements in ``try``/``except NotApplicable``; a final expression's value is still shown."""

    def visit_Module(self, node: ast.Module) -> ast.Module:
        if not node.body:
            return node
        body, last = node.body, None
        final = body[-1]
        if isinstance(final, ast.Expr):  # the cell's value: computed inside the try, shown after it
            body, last = body[:-1], final
        value = ast.Name("__workbench_value__", ast.Store())
        inside = body + ([ast.Assign([value], last.value)] if last is not None else [])
        handler = ast.ExceptHandler(
            ast.Attribute(ast.Name(_HANDLER, ast.Load()), "NotApplicable", ast.Load()), "__workbench_err__",
            [ast.Expr(ast.Call(ast.Attribute(ast.Name(_HANDLER, ast.Load()), "skip", ast.Load()),
                               [ast.Name("__workbench_err__", ast.Load())], [])),
             ast.Assign([ast.Name("__workbench_value__", ast.Store())], ast.Constant(None))])
        out: list[ast.stmt] = [ast.Try(inside, [handler], [], [])]
        if last is not None:
            out.append(ast.Expr(ast.Name("__workbench_value__", ast.Load())))
        first = node.body[0]
        for stmt in out:  # tracebacks keep the cell's own line numbers
            ast.copy_location(stmt, first)
        return ast.fix_missing_locations(ast.Module(out, node.type_ignores))


class _Handle:
    """What the transformed cells call: the exception to catch and where the skip goes."""

    def __init__(self, state: _State) -> None:
        from workbench.datasets import NotApplicable

        self.NotApplicable = NotApplicable
        self.skip = state.skip


def skip_when_not_applicable() -> bool:
    """Make this notebook's kernel skip, with the reason, the rest of any part whose analysis raises
    :class:`~workbench.datasets.NotApplicable` (see the module's description). Calling it again changes nothing.

    Returns
    -------
    bool
        True in an IPython kernel (the skipping is installed), False elsewhere (a plain Python process, where
        ``NotApplicable`` stays an exception).
    """
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the notebook extras
        return False
    shell = get_ipython()
    if shell is None:
        return False
    if _HANDLER in shell.user_ns:
        return True
    state = _State()
    shell.user_ns[_HANDLER] = _Handle(state)
    shell.input_transformers_cleanup.append(state.lines)
    shell.ast_transformers.append(_CatchNotApplicable())
    return True


__all__ = ["skip_when_not_applicable"]
