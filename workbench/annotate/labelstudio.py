"""Label Studio round trip: a sample as Label Studio tasks, and Label Studio's JSON export back into the store.

Tasks carry the item in ``data`` (Label Studio escapes ``Text`` values when it shows them);
judge scores travel as ``predictions`` only when asked, so blind labeling stays blind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workbench.annotate.ui import FIELDS
from workbench.vocabulary import LABEL_VALUES
from workbench.schema import SchemaError


def labeling_config(fields: Sequence[str] = ("support", "correct")) -> str:
    """The Label Studio labeling interface (XML) for the given fields."""
    blocks = ['<View>', '  <Header value="Entry"/>', '  <Text name="entry" value="$text"/>',
              '  <Header value="Task"/>', '  <Text name="task" value="$task"/>',
              '  <Header value="Previous summary"/>', '  <Text name="previous" value="$previous_summary"/>',
              '  <Header value="Evidence"/>', '  <Text name="evidence" value="$evidence_text"/>']
    for f in fields:
        blocks.append(f'  <Choices name="{f}" toName="entry" choice="single" required="false">')
        blocks += [f'    <Choice value="{v}"/>' for v, _ in FIELDS[f]]
        blocks.append("  </Choices>")
    blocks.append("</View>")
    return "\n".join(blocks)


def to_labelstudio(items: Sequence[Mapping[str, Any]], scores: Mapping[str, float] | None = None,
                   *, judge: str = "judge") -> list[dict[str, Any]]:
    """Label Studio tasks for a sample; ``scores`` (item id -> score) become predictions when given."""
    tasks = []
    for item in items:
        data = {k: item.get(k) for k in ("item_id", "text", "section", "task", "previous_summary")}
        data["evidence_text"] = "\n\n".join(f"[{k + 1}] {p}" for k, p in enumerate(item.get("evidence") or []))
        task: dict[str, Any] = {"data": data}
        if scores is not None and item["item_id"] in scores:
            s = float(scores[item["item_id"]])
            task["predictions"] = [{"model_version": judge, "score": s, "result": [{
                "from_name": "support", "to_name": "entry", "type": "choices",
                "value": {"choices": ["supported" if s >= 0.5 else "unsupported"]}}]}]
        tasks.append(task)
    return tasks


def from_labelstudio(export: Sequence[Mapping[str, Any]], *, round: int, annotator: str | None = None) -> list[dict[str, Any]]:  # noqa: A002
    """Label records (for ``AnnotationStore.add_many``) from Label Studio's JSON export.

    Each annotation's ``choices`` results become one label per field; the annotator is
    ``completed_by`` (its email when Label Studio expanded it) unless ``annotator`` is given.
    Cancelled (skipped) annotations are ignored. A choice the field does not declare, or several
    choices for one field, is an error naming the task's index; Label Studio's own timestamps
    are not kept (the store stamps ``labeled_at`` when the labels are added).
    """
    records: list[dict[str, Any]] = []
    for t_index, task in enumerate(export):
        data = task.get("data") or {}
        item_id = data.get("item_id")
        if not isinstance(item_id, str):
            raise SchemaError(field=f"[{t_index}].data.item_id", expected="the sample's item id", got=repr(item_id))
        for ann in task.get("annotations") or []:
            if ann.get("was_cancelled"):
                continue
            who = annotator
            if who is None:
                by = ann.get("completed_by")
                who = by.get("email") if isinstance(by, dict) else f"ls-user-{by}"
            for res in ann.get("result") or []:
                if res.get("type") != "choices":
                    continue
                field = res.get("from_name")
                choices = (res.get("value") or {}).get("choices") or []
                if field in FIELDS and choices:
                    if len(choices) != 1 or choices[0] not in LABEL_VALUES[field]:
                        raise SchemaError(field=f"[{t_index}].annotations.result.{field}",
                                          expected=f"one of {list(LABEL_VALUES[field])}", got=repr(choices))
                    records.append({"item_id": item_id, "annotator": str(who), "round": round, "field": field,
                                    "value": str(choices[0]), "note": None})  # the store stamps labeled_at
    return records
