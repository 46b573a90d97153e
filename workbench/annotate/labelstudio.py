"""Label Studio round trip: a sample as Label Studio tasks, and Label Studio's JSON export back into the store.

Tasks carry the item in ``data`` (Label Studio escapes ``Text`` values when it shows them);
judge scores travel as ``predictions`` only when asked, so blind labeling stays blind.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from workbench.annotate.evaluation import NO_MATERIAL
from workbench.annotate.store import check_annotator
from workbench.annotate.views import DEFINITIONS, FIELDS, QUESTIONS
from workbench.schema import SchemaError
from workbench.validation import describe_value
from workbench.vocabulary import LABEL_VALUES


def labeling_config(field: str = "support") -> str:
    """The Label Studio labeling interface (XML) for one field (one field per project): the question and the
    protocol's definitions first, then the entry and its section, the task, the previous summary, the evidence
    passages with their sources and, for ``correct``, the evaluation material; the choices last. Every shown
    value comes from the task's ``data`` (Label Studio escapes ``Text`` values); the fixed texts are escaped
    here."""
    if field not in FIELDS:
        raise ValueError(f"field: expected one of {sorted(FIELDS)}, got {field!r}")
    q = escape(QUESTIONS[field], {'"': "&quot;"})
    blocks = ["<View>", f'  <Header value="Question ({field})"/>', f'  <Text name="question" value="{q}"/>']
    blocks += [f'  <Text name="def_{v}" value="{escape(f"{v}: {m}", {chr(34): "&quot;"})}"/>'
               for v, m in DEFINITIONS[field].items()]
    blocks += [f'  <Choices name="{field}" toName="entry" choice="single" showInline="true" required="true">']
    blocks += [f'    <Choice value="{v}"/>' for v, _ in FIELDS[field]]
    blocks += ["  </Choices>",
               '  <Header value="Entry (section: $section)"/>', '  <Text name="entry" value="$text"/>',
               '  <Header value="Task"/>', '  <Text name="task" value="$task"/>',
               '  <Header value="Previous summary"/>', '  <Text name="previous" value="$previous_summary"/>',
               '  <Header value="Evidence passages, each with its source"/>',
               '  <Text name="evidence" value="$evidence_text"/>']
    if field == "correct":
        blocks += ['  <Header value="Evaluation material"/>', '  <Text name="evaluation" value="$evaluation_text"/>']
    blocks.append("</View>")
    return "\n".join(blocks)


def check_export_paths(tasks: str | os.PathLike[str], config: str | os.PathLike[str],
                       inputs: Sequence[str | os.PathLike[str]] = ()) -> None:
    """The tasks file and the interface beside it replace only what an export wrote: an existing tasks file must
    be a JSON list of tasks with an ``item_id`` each, an existing interface one of :func:`labeling_config`'s;
    neither may be an input. Anything else is :class:`~workbench.atomic.OutputRefused`."""
    import json

    from workbench.atomic import OutputRefused, check_not_input

    for path in (tasks, config):
        check_not_input(path, inputs)
        if Path(path).is_dir():
            raise OutputRefused(path, "is a directory, not a file an export wrote")
    t = Path(tasks)
    if t.exists():
        try:
            data = json.loads(t.read_text(encoding="utf-8"))
            ours = isinstance(data, list) and all(isinstance(d, dict) and "item_id" in d.get("data", {}) for d in data)
        except (ValueError, UnicodeDecodeError):
            ours = False
        if not ours:
            raise OutputRefused(t, "exists and is not a task list an export wrote; name a new file")
    c = Path(config)
    if c.exists() and c.read_text(encoding="utf-8", errors="replace") not in {labeling_config(f) for f in FIELDS}:
        raise OutputRefused(c, "exists and is not a labeling interface an export wrote; name a new file "
                               "(--config)")


def to_labelstudio(items: Sequence[Mapping[str, Any]], scores: Mapping[str, float] | None = None,
                   *, judge: str = "judge") -> list[dict[str, Any]]:
    """Label Studio tasks for a sample; ``scores`` (item id -> score) become predictions when given.

    ``data`` holds the item id, entry text, section, task and previous summary, ``evidence_text`` (every
    passage numbered, each under its source) and ``evaluation_text`` (the material for ``correct``).
    """
    tasks = []
    for item in items:
        data = {k: item.get(k) if item.get(k) is not None else "" for k in
                ("item_id", "text", "section", "task", "previous_summary")}
        passages = item.get("evidence") or []
        sources = item.get("evidence_sources") or []
        data["evidence_text"] = "\n\n".join(
            f"[{k + 1} of {len(passages)}] from {sources[k] if k < len(sources) else 'source not recorded'}\n{p}"
            for k, p in enumerate(passages)) or "(no environment output was retrieved for this entry)"
        material = item.get("evaluation") or []
        data["evaluation_text"] = "\n\n".join(f"{m.get('name')}\n{m.get('text')}" for m in material) or NO_MATERIAL
        task: dict[str, Any] = {"data": data}
        if scores is not None and item["item_id"] in scores:
            s = float(scores[item["item_id"]])
            task["predictions"] = [{"model_version": judge, "score": s, "result": [{
                "from_name": "support", "to_name": "entry", "type": "choices",
                "value": {"choices": ["supported" if s >= 0.5 else "unsupported"]}}]}]
        tasks.append(task)
    return tasks


def _annotator(by: object, annotator_from: str, where: str) -> str:
    """The store's name for Label Studio's ``completed_by``: its e-mail, or its first and last names joined by
    ``.``; a bare user id (an export that did not expand users) is ``ls-user-ID``."""
    if isinstance(by, dict):
        if annotator_from == "email":
            name = by.get("email")
        else:
            parts = [str(by.get(k) or "").strip() for k in ("first_name", "last_name")]
            name = ".".join(re.sub(r"\s+", "-", p) for p in parts if p)
        if not name:
            raise SchemaError(field=f"{where}.completed_by.{annotator_from}", expected=f"the annotator's {annotator_from}",
                              got=repr(by))
        return str(name)
    if isinstance(by, int):
        return f"ls-user-{by}"
    raise SchemaError(field=f"{where}.completed_by", expected="a user id or a user object", got=repr(by))


def _kind(value: Any, kind: type, where: str, expected: str) -> Any:
    """``value`` if it is a ``kind``; else the error naming where in the export and what came."""
    if not isinstance(value, kind):
        raise SchemaError(field=where, expected=expected, got=describe_value(value))
    return value


def from_labelstudio(export: Sequence[Mapping[str, Any]], *, round: int, annotator: str | None = None,  # noqa: A002
                     annotator_from: str = "email") -> list[dict[str, Any]]:
    """Label records (for ``AnnotationStore.add_many``) from Label Studio's JSON export.

    Each annotation's ``choices`` results become one label per field; the annotator is
    ``completed_by`` -- its e-mail (``annotator_from="email"``) or first and last names (``"name"``) when Label
    Studio expanded the user, ``ls-user-ID`` when it did not -- unless ``annotator`` is given; every name must
    pass the store's naming rule.
    Cancelled (skipped) annotations are ignored. A choice the field does not declare, or several
    choices for one field, is an error naming the task's index; one person's label of one item and field given
    twice is one label when the values agree and an error naming both places when they differ. Label Studio's own
    timestamps are not kept (the store stamps ``labeled_at`` when the labels are added).
    """
    records: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, str], tuple[str, str]] = {}  # (item, annotator, field) -> (value, where it was)
    for t_index, task in enumerate(export):
        _kind(task, dict, f"[{t_index}]", "a task (an object)")
        data = _kind(task.get("data") or {}, dict, f"[{t_index}].data", "an object")
        item_id = data.get("item_id")
        if not isinstance(item_id, str):
            raise SchemaError(field=f"[{t_index}].data.item_id", expected="the sample's item id", got=repr(item_id))
        for a_index, ann in enumerate(_kind(task.get("annotations") or [], list, f"[{t_index}].annotations",
                                            "a list of annotations")):
            _kind(ann, dict, f"[{t_index}].annotations[{a_index}]", "an annotation (an object)")
            if ann.get("was_cancelled"):
                continue
            who = annotator if annotator is not None else _annotator(ann.get("completed_by"), annotator_from,
                                                                       f"[{t_index}].annotations")
            try:
                check_annotator(who)
            except SchemaError as err:
                raise SchemaError(field=f"[{t_index}].annotations.completed_by", expected=err.expected,
                                  got=err.got) from None
            where = f"[{t_index}].annotations[{a_index}].result"
            for r_index, res in enumerate(_kind(ann.get("result") or [], list, where, "a list of results")):
                if not isinstance(res, dict) or res.get("type") != "choices":
                    continue
                field = res.get("from_name")
                value = _kind(res.get("value") or {}, dict, f"{where}[{r_index}].value", "an object")
                choices = _kind(value.get("choices") or [], list, f"{where}[{r_index}].value.choices",
                                "a list of choices")
                if field in FIELDS and choices:
                    if len(choices) != 1 or choices[0] not in LABEL_VALUES[field]:
                        raise SchemaError(field=f"[{t_index}].annotations.result.{field}",
                                          expected=f"one of {list(LABEL_VALUES[field])}", got=repr(choices))
                    key, here = (item_id, str(who), field), f"{where}[{r_index}]"
                    if key in seen:  # the same person twice on one item (a task duplicated in the project?)
                        if seen[key][0] != choices[0]:
                            raise SchemaError(field=here, expected=f"one {field} label per item and annotator",
                                              got=f"{choices[0]!r} by {who!r} for item {item_id!r}, who said "
                                                  f"{seen[key][0]!r} at {seen[key][1]}")
                        continue  # the same label again: one label
                    seen[key] = (str(choices[0]), here)
                    records.append({"item_id": item_id, "annotator": str(who), "round": round, "field": field,
                                    "value": str(choices[0]), "note": None})  # the store stamps labeled_at
    return records


__all__ = ["check_export_paths", "from_labelstudio", "labeling_config", "to_labelstudio"]
