"""The analyses of the source documents and beyond them (filled in by the next step of the package layout)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._util.lazy import attach

__all__ = ["sjc"]

__getattr__, __dir__ = attach(__name__, {}, modules=["sjc"], public=__all__)

if TYPE_CHECKING:
    from workbench.analyses import sjc
