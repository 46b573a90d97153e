"""```{workbench-table} NAME``` (a MyST page): the reference of one table of the data model, rendered from its declaration
(:data:`workbench.tables.TABLES`: every column's name, type, whether it is required and may be null, its allowed values
or range, and its ``doc``), so the pages never drift from what the readers check."""

from __future__ import annotations

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split()) or "\u2014"


def _rows(name: str) -> list[str]:
    """The table as Markdown (a MyST page's directive content is parsed as Markdown)."""
    from workbench.tables import TABLES

    table = TABLES[name]
    lines = ["| column | type | present | meaning |", "| --- | --- | --- | --- |"]
    for col in table.columns:
        present = "required" if col.required else "optional"
        if col.nullable:
            present += ", may be null"
        meaning = col.doc
        if col.values:
            meaning += f" One of: {', '.join(f'`{v}`' for v in col.values)}."
        bounds = [f">= {col.minimum:g}" if col.minimum is not None else "",
                  f"<= {col.maximum:g}" if col.maximum is not None else ""]
        if any(bounds):
            meaning += f" ({', '.join(b for b in bounds if b)})"
        if col.timestamp:
            meaning += " (an ISO-8601 timestamp)"
        lines.append(f"| `{col.name}` | {_cell(str(col.dtype))} | {present} | {_cell(meaning)} |")
    key = f"Key: {', '.join(f'`{k}`' for k in table.key)} (unique)." if table.key else "No key (rows may repeat)."
    refs = "; ".join(f"{', '.join(f'`{c}`' for c in cols)} -> `{other}`" for cols, other in table.references)
    lines += ["", key + (f" References: {refs}." if refs else "")]
    return lines


class TableReference(Directive):
    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        from workbench.tables import TABLES

        if name not in TABLES:
            raise self.error(f"workbench-table: no table {name!r}; the tables are {sorted(TABLES)}")
        container = nodes.container()
        self.state.nested_parse(StringList(_rows(name), source=f"workbench.tables.TABLES[{name!r}]"),
                                self.content_offset, container)
        return container.children


class FormatReference(Directive):
    """```{workbench-formats}```: every log format of the registry (:data:`workbench.adapters.LOG_FORMATS`), its
    ``--format`` name, what it reads, how it is recognised, and its reader, so the page lists what ``import`` reads."""

    required_arguments = 0
    has_content = False

    def run(self) -> list[nodes.Node]:
        from workbench.adapters import LOG_FORMATS

        lines = ["| `--format` | what it reads | input | sniffed by | reader |", "| --- | --- | --- | --- | --- |"]
        for f in LOG_FORMATS.values():
            how = [f"suffix {', '.join(f'`{x}`' for x in f.suffixes)}" if f.suffixes else "",
                   "first bytes" if f.head else "", "first record" if f.record else "",
                   "its directory" if f.directory else ""]
            sniffed = ", ".join(h for h in how if h) or ("the default" if f.name == "trajectory" else "\u2014")
            module, _, func = f.reader.partition(":")
            public = f"{{func}}`workbench.adapters.{func}`" if not func.startswith("_") else f"`{func}`"
            extra = f" (extra `{f.extra}`)" if f.extra else ""
            lines.append(f"| `{f.name}` | {_cell(f.summary)}{extra} | {f.reads} | {sniffed} | {public} |")
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source="workbench.adapters.LOG_FORMATS"), self.content_offset,
                                container)
        return container.children


def setup(app):  # type: ignore[no-untyped-def]
    app.add_directive("workbench-table", TableReference)
    app.add_directive("workbench-formats", FormatReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
