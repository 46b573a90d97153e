"""Label Studio round trip: a sample as Label Studio tasks, and Label Studio's JSON export back into the store.

Tasks carry in ``data`` only what the field's protocol shows (:data:`TASK_DATA`; Label Studio escapes ``Text``
values when it shows them); judge scores travel as ``predictions`` only when asked, so blind labeling stays blind.
An annotation's note (the interface's text area) comes back with its labels; skipped annotations are counted,
never labels; annotators are named from the user objects a snapshot export expands, or from Label Studio's users
list when the export gives bare ids.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Mapping, Sequence
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from workbench.tables._vocabulary import check_annotator
from workbench.annotate._item_views import DEFINITIONS, FIELDS, item_question, item_view, OWN_DEFINITIONS, QUESTIONS
from workbench.errors import SchemaError
from workbench.errors import describe_value
from workbench.tables._vocabulary import LABEL_VALUES


#: the task ``data`` a Label Studio task of each field carries: what that field's protocol shows the annotator
#: (``annotate.views.item_view``) and the item id that brings the label back; never a score or ground truth
TASK_DATA: dict[str, tuple[str, ...]] = {
    "support": ("item_id", "question", "text", "section", "task", "previous_summary", "evidence_text"),
    "correct": ("item_id", "question", "text", "section", "task", "previous_summary", "evidence_text",
                "evaluation_text"),
}
#: the data key that says, in a task exported with judge scores, that the judge's view is shown
JUDGE_SHOWN = "judge_shown"
#: the text area of the interface that carries an annotator's note back (the protocol: "unsure: ... add a note")
NOTE = "note"


def labeling_config(field: str = "support", *, predictions: bool = False, own_question: bool = False) -> str:
    """The Label Studio labeling interface (XML) for one field (one field per project): the question and the
    protocol's definitions first, then the choices and a note, then the entry and its section, the task, the
    previous summary, the evidence passages with their sources and, for ``correct``, the evaluation material.
    Every shown value comes from the task's ``data`` (Label Studio escapes ``Text`` values); the fixed texts are
    escaped here. ``predictions``: the interface of a task list exported with judge scores, which says so above
    the entry (``$judge_shown``). ``own_question``: the tasks ask their data set's own question (a labelled-summaries
    header's), so the values are defined as its answers (``OWN_DEFINITIONS``), not by the
    agent protocol's tool results.

    Parameters
    ----------
    field : str, default "support"
        The field labelled.
    predictions : bool, default False
        The tasks carry judge scores.
    own_question : bool, default False
        The tasks ask their data set's own question.

    Returns
    -------
    str
        The interface's XML.
    """
    if field not in FIELDS:
        raise ValueError(f"field: expected one of {sorted(FIELDS)}, got {field!r}")
    blocks = ["<View>", f'  <Header value="Question ({field})"/>', '  <Text name="question" value="$question"/>']
    blocks += [f'  <Text name="def_{v}" value="{escape(f"{v}: {m}", {chr(34): "&quot;"})}"/>'
               for v, m in (OWN_DEFINITIONS if own_question and field == "support" else DEFINITIONS[field]).items()]
    blocks += [f'  <Choices name="{field}" toName="entry" choice="single" showInline="true" required="true">']
    blocks += [f'    <Choice value="{v}"/>' for v, _ in FIELDS[field]]
    blocks += ["  </Choices>",
               f'  <TextArea name="{NOTE}" toName="entry" editable="true" maxSubmissions="1" rows="2" '
               'placeholder="Note (say why, above all for unsure)"/>']
    if predictions:
        blocks += ['  <Header value="The judge\'s view is shown"/>', f'  <Text name="judge" value="${JUDGE_SHOWN}"/>']
    blocks += ['  <Header value="Entry (section: $section)"/>', '  <Text name="entry" value="$text"/>',
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
    neither may be an input. Anything else is :class:`~workbench.errors.OutputRefused`."""
    import json

    from workbench._util.atomic import OutputRefused, check_not_input

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
    ours_xml = {labeling_config(f, predictions=p, own_question=o) for f in FIELDS for p in (False, True)
                for o in (False, True)}
    if c.exists() and c.read_text(encoding="utf-8", errors="replace") not in ours_xml:
        raise OutputRefused(c, "exists and is not a labeling interface an export wrote; name a new file "
                               "(--config)")


def task_data(item: Mapping[str, Any], field: str = "support") -> dict[str, str]:
    """What a task of ``field`` shows of one sample ``item``, in the words of every other interface
    (:func:`workbench.annotate.item_view`): the keys of :data:`TASK_DATA` and no other.

    Parameters
    ----------
    item : mapping
        A sample item (:func:`workbench.annotate.load_sample`).
    field : {"support", "correct"}
        The field the project labels; only ``correct`` shows the evaluation material.

    Returns
    -------
    dict of str to str
        The task's ``data``: ``item_id``, ``question`` (the data set's own, else the protocol's), ``text``, ``section``, ``task``, ``previous_summary`` ("(none: first
        compaction)" when empty, as the terminal says), ``evidence_text`` (every passage numbered under its source)
        and, for ``correct``, ``evaluation_text``.
    """
    if field not in TASK_DATA:
        raise ValueError(f"field: expected one of {sorted(TASK_DATA)}, got {field!r}")
    full = {k: "" if item.get(k) is None else str(item[k]) for k in ("item_id", "text", "section", "task")}
    full["question"] = item_question(item, field)  # the data set's own question, or the protocol's
    evidence, material = [], []
    for b in item_view(dict(item), field, question=False):  # the view's own words, its titles as headers here
        if b.title == "Previous summary":
            full["previous_summary"] = b.text
        elif b.title == "Evidence":  # no passage: the view's notice
            evidence.append(b.text)
        elif b.kind == "evidence":  # "Evidence [1 of 2] from step 3, Read"
            evidence.append(f"{b.title.removeprefix('Evidence ')}\n{b.text}")
        elif b.title == "Evaluation material":  # none: the view's notice
            material.append(b.text)
        elif b.kind == "material":  # "Evaluation material: NAME"
            material.append(f"{b.title.removeprefix('Evaluation material: ')}\n{b.text}")
    full["evidence_text"] = "\n\n".join(evidence)
    full["evaluation_text"] = "\n\n".join(material)
    return {k: full[k] for k in TASK_DATA[field]}


def to_labelstudio(items: Sequence[Mapping[str, Any]], scores: Mapping[str, float] | None = None,
                   *, judge: str = "judge", field: str = "support", tau: float = 0.5) -> list[dict[str, Any]]:
    """Label Studio tasks for a sample, blind by default: each task's ``data`` is ``task_data`` (the
    field's allow-list, :data:`TASK_DATA`), so no score, outcome or ground truth reaches Label Studio's data
    manager or its task API.

    Parameters
    ----------
    items : sequence of mapping
        The sample's items.
    scores : mapping of str to float, optional
        item id -> the judge's support score. When given (``support`` only), each scored task gets a Label
        Studio ``predictions`` entry (``model_version`` the judge's name, ``score``, the choice at ``tau``) and a
        ``judge_shown`` line saying the judge's view is shown; export such tasks with
        ``labeling_config(field, predictions=True)``.
    judge : str, default "judge"
        The judge's name in ``model_version``.
    field : {"support", "correct"}, default "support"
        The field the project labels.
    tau : float, default 0.5
        The score at and above which the judge's choice is ``supported``.

    Returns
    -------
    list of dict
        Tasks for Label Studio's import (``data`` and, with scores, ``predictions``).
    """
    if scores is not None and field != "support":
        raise ValueError(f"scores: a judge scores support, not {field!r}; export {field!r} without predictions")
    tasks = []
    for item in items:
        task: dict[str, Any] = {"data": task_data(item, field)}
        if scores is not None:
            s = scores.get(str(item["item_id"]))
            task["data"][JUDGE_SHOWN] = (
                f"{judge} scored this entry {float(s):.3f}: '{'supported' if float(s) >= tau else 'unsupported'}' "
                f"at tau {tau:g}, pre-selected below; label what the evidence shows" if s is not None
                else f"{judge} did not score this entry")
            if s is not None:
                choice = "supported" if float(s) >= tau else "unsupported"
                task["predictions"] = [{"model_version": judge, "score": float(s), "result": [{
                    "from_name": field, "to_name": "entry", "type": "choices", "value": {"choices": [choice]}}]}]
        tasks.append(task)
    return tasks


def judge_scores(path: str | os.PathLike[str], judge: str | None = None) -> tuple[dict[str, float], str]:
    """One judge's scores from a scores table (``workbench judge ... --out SCORES.parquet``), for predictions.

    Parameters
    ----------
    path : str or os.PathLike
        The scores table.
    judge : str, optional
        Which judge; by default the table's only one.

    Returns
    -------
    tuple of (dict of str to float, str)
        Entry id -> the judge's score (its first repeat; entries without a usable answer left out), and the
        judge's name. A judge the table does not hold, or none named when it holds several, is
        :class:`~workbench.errors.SelectionError` (``judge``).
    """
    import polars as pl

    from workbench.errors import SelectionError
    from workbench.tables._files import read_table

    table = read_table(path, "scores")
    judges = sorted(table["judge"].unique().to_list()) if table.height else []
    if judge is None:
        if len(judges) != 1:
            raise SelectionError("judge", f"one of the judges in {path}", f"none named, and it holds {judges}")
        judge = judges[0]
    elif judge not in judges:
        raise SelectionError("judge", f"one of the judges in {path} ({judges})", repr(judge))
    mine = (table.filter((pl.col("judge") == judge) & pl.col("score").is_not_null())
            .sort("repeat").unique("entry_id", keep="first"))
    return dict(zip(mine["entry_id"].to_list(), mine["score"].to_list(), strict=True)), str(judge)


@dataclass(frozen=True)
class LabelStudioImport:
    """What :func:`read_labelstudio` found in an export: the label records, and what it did not take as labels.

    ``cancelled``: skipped (cancelled) annotations, never labels; ``unlabeled``: tasks nobody annotated;
    ``notes``: labels that carry a note; ``bare_ids``: Label Studio user ids the export names without the user
    (named ``ls-user-ID``: a plain JSON export, and no users file); ``without_field``: user ids whose asked-for
    field (e-mail, or first and last names) is empty, named by the other one; ``not_taken``: the results of
    annotations that are neither a label of a field the store knows nor the note, counted by control name and
    type (a control renamed for one annotator, ``factuality`` for ``support``, is counted here, not lost).
    ``replaced``: notes whose lone UTF-16 surrogates were replaced by U+FFFD."""

    records: list[dict[str, Any]]
    cancelled: int = 0
    unlabeled: int = 0
    notes: int = 0
    bare_ids: tuple[int, ...] = ()
    without_field: tuple[int, ...] = ()
    not_taken: dict[str, int] = dataclasses.field(default_factory=dict)
    replaced: int = 0

    def not_taken_text(self) -> str:
        """The results not taken, for a summary line: ``"15 result(s) not taken as labels (factuality (choices): 15)"``."""
        if not self.not_taken:
            return "0 result(s) not taken"
        parts = ", ".join(f"{name}: {n}" for name, n in sorted(self.not_taken.items(), key=lambda kv: (-kv[1], kv[0])))
        return f"{sum(self.not_taken.values())} result(s) not taken as labels ({parts})"


def read_users(users: Any, where: str = "users") -> dict[int, dict[str, Any]]:
    """Label Studio's users (``GET /api/users``: a list of objects with ``id``, ``email``, ``first_name``,
    ``last_name``, ``username``; or a page with ``results``) by id.

    Parameters
    ----------
    users : list of dict or dict
        The parsed JSON.
    where : str, default "users"
        How errors name the input.

    Returns
    -------
    dict of int to dict
        User id -> the user.
    """
    if isinstance(users, dict) and isinstance(users.get("results"), list):
        users = users["results"]
    _kind(users, list, where, "Label Studio's users (GET /api/users): a list of users")
    out: dict[int, dict[str, Any]] = {}
    for k, user in enumerate(users):
        _kind(user, dict, f"{where}[{k}]", "a user (an object)")
        if not isinstance(user.get("id"), int):
            raise SchemaError(field=f"{where}[{k}].id", expected="the user's id (an integer)", got=repr(user.get("id")))
        out[user["id"]] = user
    return out


def _name_of(user: Mapping[str, Any], annotator_from: str) -> str:
    """The user's e-mail, or first and last names joined by ``.`` (spaces as ``-``); "" when empty."""
    if annotator_from == "email":
        return str(user.get("email") or "").strip()
    parts = [str(user.get(k) or "").strip() for k in ("first_name", "last_name")]
    return ".".join(re.sub(r"\s+", "-", p) for p in parts if p)


def _annotator(by: object, annotator_from: str, where: str, users: Mapping[int, Mapping[str, Any]],
               bare: set[int], without: set[int]) -> str:
    """The store's name for Label Studio's ``completed_by``: the user's ``annotator_from`` field (the user object
    of a snapshot export that expanded users, else ``users[id]``); the other field when that one is empty
    (counted in ``without``); ``ls-user-ID`` for an id no user is known for (counted in ``bare``)."""
    if isinstance(by, bool) or not isinstance(by, (int, dict)):
        raise SchemaError(field=f"{where}.completed_by", expected="a user id or a user object", got=repr(by))
    uid = by.get("id") if isinstance(by, dict) else by
    user = by if isinstance(by, dict) else users.get(by)
    if user is None:
        bare.add(int(by))  # type: ignore[arg-type]
        return f"ls-user-{by}"
    name = _name_of(user, annotator_from)
    if not name:
        name = _name_of(user, "name" if annotator_from == "email" else "email")
        if isinstance(uid, int):
            without.add(uid)
    if not name:
        if not isinstance(uid, int):
            raise SchemaError(field=f"{where}.completed_by", expected="a user with an id, e-mail or name",
                              got=repr(by))
        return f"ls-user-{uid}"
    return name


def _kind(value: Any, kind: type, where: str, expected: str) -> Any:
    """``value`` if it is a ``kind``; else the error naming where in the export and what came."""
    if not isinstance(value, kind):
        raise SchemaError(field=where, expected=expected, got=describe_value(value))
    return value


def _note(results: list[Any]) -> str | None:
    """The annotation's note: its ``note`` text area's lines, joined."""
    texts = [str(t) for res in results if isinstance(res, dict) and res.get("from_name") == NOTE
             and res.get("type") == "textarea" for t in ((res.get("value") or {}).get("text") or [])]
    note = "\n".join(t for t in texts if t.strip())
    return note or None


def read_labelstudio(export: Sequence[Mapping[str, Any]], *, round: int, annotator: str | None = None,  # noqa: A002
                     annotator_from: str = "email",
                     users: Mapping[int, Mapping[str, Any]] | None = None) -> LabelStudioImport:
    """Label records (for ``AnnotationStore.add_many``) from Label Studio's JSON export, and what was left out.

    Each annotation's ``choices`` results become one label per field, with the annotation's ``note`` text (the
    interface's text area) as the label's note. The annotator is ``completed_by``: its e-mail
    (``annotator_from="email"``) or first and last names (``"name"``) -- from the user object when the export
    expanded users (a snapshot export with ``completed_by`` serialized in full), else from ``users`` (Label
    Studio's ``/api/users``, ``read_users``) -- and ``ls-user-ID`` when neither names the id; ``annotator``
    overrides them all; every name must pass the store's naming rule.

    Cancelled (skipped) annotations are not labels: they are counted. A choice the field does not declare, or
    several choices for one field, is an error naming the task's index; one person's label of one item and field
    given twice is one label when the values agree and an error naming both places when they differ. Label
    Studio's own timestamps are not kept (the store stamps ``labeled_at`` when the labels are added).

    Parameters
    ----------
    export : sequence of mapping
        The parsed export: a list of tasks.
    round : int
        The labeling round the labels belong to.
    annotator : str, optional
        One name for every label, instead of ``completed_by``.
    annotator_from : {"email", "name"}, default "email"
        Which user field names an annotator.
    users : mapping of int to mapping, optional
        Label Studio's users by id, for an export that gives bare ids.

    Returns
    -------
    LabelStudioImport
        The records, and the counts of what was not a label.
    """
    records: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, str], tuple[str, str]] = {}  # (item, annotator, field) -> (value, where it was)
    bare: set[int] = set()
    without: set[int] = set()
    cancelled = unlabeled = replaced = 0
    not_taken: Counter[str] = Counter()
    for t_index, task in enumerate(export):
        _kind(task, dict, f"[{t_index}]", "a task (an object)")
        data = _kind(task.get("data") or {}, dict, f"[{t_index}].data", "an object")
        item_id = data.get("item_id")
        if not isinstance(item_id, str):
            raise SchemaError(field=f"[{t_index}].data.item_id", expected="the sample's item id", got=repr(item_id))
        if not _is_unicode(item_id):
            raise SchemaError(field=f"[{t_index}].data.item_id", expected="the sample's item id (valid Unicode)",
                              got=f"{item_id.encode('utf-8', 'backslashreplace').decode('ascii', 'replace')!r}, "
                                  "which holds a lone UTF-16 surrogate")
        annotations = _kind(task.get("annotations") or [], list, f"[{t_index}].annotations", "a list of annotations")
        unlabeled += not any(isinstance(a, dict) and not a.get("was_cancelled") for a in annotations)
        for a_index, ann in enumerate(annotations):
            _kind(ann, dict, f"[{t_index}].annotations[{a_index}]", "an annotation (an object)")
            if ann.get("was_cancelled"):
                cancelled += 1
                continue
            who = annotator if annotator is not None else _annotator(
                ann.get("completed_by"), annotator_from, f"[{t_index}].annotations", users or {}, bare, without)
            try:
                check_annotator(who)
            except SchemaError as err:
                raise SchemaError(field=f"[{t_index}].annotations.completed_by", expected=err.expected,
                                  got=err.got) from None
            where = f"[{t_index}].annotations[{a_index}].result"
            results = _kind(ann.get("result") or [], list, where, "a list of results")
            note = _note(results)
            if note is not None and not _is_unicode(note):
                note, replaced = _SURROGATE.sub("\ufffd", note), replaced + 1
            for r_index, res in enumerate(results):
                kind = res.get("type") if isinstance(res, dict) else None
                field = res.get("from_name") if isinstance(res, dict) else None
                if kind == "textarea" and field == NOTE:
                    continue  # the note: taken, as every label's of this annotation
                choices = []
                if kind == "choices":
                    value = _kind(res.get("value") or {}, dict, f"{where}[{r_index}].value", "an object")
                    choices = _kind(value.get("choices") or [], list, f"{where}[{r_index}].value.choices",
                                    "a list of choices")
                if field not in FIELDS or not choices:  # another control, or none chosen: counted, not lost
                    not_taken[f"{field} ({kind})"] += 1
                    continue
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
                asked = data.get("question")  # the data set's own question, which the task showed
                records.append({"item_id": item_id, "annotator": str(who), "round": round, "field": field,
                                "value": str(choices[0]), "note": note,  # the store stamps labeled_at
                                **({"question": asked} if isinstance(asked, str) and asked != QUESTIONS[field]
                                   else {})})
    return LabelStudioImport(records, cancelled, unlabeled, sum(r["note"] is not None for r in records),
                             tuple(sorted(bare)), tuple(sorted(without)), dict(not_taken), replaced)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _is_unicode(text: str) -> bool:
    """Whether ``text`` is valid Unicode (JSON's ``\\ud800`` escapes can make a lone surrogate, which no file
    can hold as UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def from_labelstudio(export: Sequence[Mapping[str, Any]], *, round: int, annotator: str | None = None,  # noqa: A002
                     annotator_from: str = "email",
                     users: Mapping[int, Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The label records of :func:`read_labelstudio` (the same arguments), without its counts.

    Parameters
    ----------
    export : sequence of mapping
        Label Studio's JSON export (its tasks with their annotations).
    round : int
        The labeling round the labels are stored under.
    annotator : str, optional
        One annotator name for every label.
    annotator_from : str, default "email"
        The user field an annotator's name is taken from.
    users : mapping of int to mapping, optional
        Label Studio's users by id.

    Returns
    -------
    list of dict
        The label records.
    """
    return read_labelstudio(export, round=round, annotator=annotator, annotator_from=annotator_from,
                            users=users).records


__all__ = ["from_labelstudio", "LabelStudioImport", "labeling_config", "read_labelstudio", "TASK_DATA", "to_labelstudio"]
