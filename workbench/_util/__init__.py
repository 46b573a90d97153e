"""Private helpers every layer may use: atomic files, JSON lines, executors, progress, untrusted text, bounded
tokens, the project's root and the lazy name map of the package facades. Nothing here is public: import the module
that defines a name (``from workbench._util.atomic import atomic_write``)."""

__all__: list[str] = []
