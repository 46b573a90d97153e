"""Every circle in the workbench's import graph, type-checking imports included (``make lint``: exit 1 on any).

The graph is grimp's (the one import-linter checks the layers with): a module per node, an edge per import at the top,
inside a function or under ``if TYPE_CHECKING``. A circle is a strongly connected set of two or more modules (Tarjan's
algorithm); each is printed. A package face (``__init__``) imports its own modules
only for the type checker, and is left out: a module importing its package's face to reach a sibling is not a
circle of the code, and the faces are generated (``tools/faces.py``).
"""

from __future__ import annotations

import sys


def circles(package: str = "workbench") -> list[list[str]]:
    """The strongly connected sets of two or more modules of ``package``'s import graph, each sorted."""
    import grimp

    graph = grimp.build_graph(package, exclude_type_checking_imports=False)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    sys.setrecursionlimit(10_000)

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, []):
            if w not in edges:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def main() -> int:
    found = circles()
    for group in found:
        print(f"import circle: {' <-> '.join(group)}", file=sys.stderr)
    print(f"import circles: {len(found)}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
