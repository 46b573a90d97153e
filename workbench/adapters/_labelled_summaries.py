"""Human-labelled summaries as workbench tables: the ``labelled-summaries`` format, for any benchmark or labelled
compactions a researcher has (``workbench import FILE --format labelled-summaries --out DIR``).

One JSON object per line (a ``.jsonl`` file, or ``.jsonl.gz``)::

    {"id": "s1", "source_id": "a1", "system": "bart",
     "source": "the full source text" | ["passage", ...],
     "summary": "the summary text",
     "sentences": ["...", "..."],
     "labels": [{"sentence": 0, "annotator": "w1", "value": "supported", "note": "...", "field": "support"}],
     "score": 0.67, "split": "test", "dataset": "cnndm",
     "metrics": {"BertScore P Art": 0.91, "FactCC": null}, "meta": {"GramE": 1.0},
     "human": {"faithful": 0.67, "factual": 1},
     "spans": [{"sentence": 1, "start": 4, "end": 9, "annotator": "w1", "type": "EntE"}]}

An optional first line, the header, says what the file's fields mean for the whole file::

    {"header": {"question": "Is every fact of this sentence stated in the article?",
                "targets": {"faithful": {"direction": "higher", "description": "share of workers ..."},
                            "factual": {"direction": "higher"}},
                "metrics": {"FactCC": {"direction": "higher"}, "perplexity": {"direction": "lower"}}}}

* ``id`` (text, unique in the file), ``source_id`` (text: the source the summary was written from; the unit every
  interval resamples), ``source`` (a text, one passage; or a list of texts, one passage each) and ``summary``
  (text) are required.
* ``system`` (text): what wrote the summary; the run's ``method``, the variable FRANK's partial correlation
  controls for.
* ``sentences`` (a non-empty list of texts): the summary's entries, as given. Absent, the summary is split by
  :func:`split_sentences` (a documented rule, nothing downloaded).
* ``labels``: per-sentence labels by any number of annotators: ``sentence`` (0-based index into the sentences),
  ``annotator`` (a name the annotation store accepts), ``value`` (in the labels vocabulary of ``field``: for
  ``support``, the default field, ``supported``, ``unsupported`` or ``unsure``), optional ``note``. One label per
  (sentence, annotator, field).
* ``score`` (a finite number): a summary-level human score (FRANK's ``Factuality``), the run column
  ``human_score``; ``human`` (name -> number or null): more summary-level human targets, run columns
  ``human_NAME`` (the notebooks' ``TARGET``); ``split``, ``dataset`` (text); ``metrics`` (name -> number or null:
  published per-summary metric scores, run columns ``metric_NAME``); ``meta`` (name -> text, number, boolean or
  null: anything else to keep, run columns ``meta_NAME``).
* ``spans``: character spans annotators marked in a sentence: ``sentence``, ``start`` and ``end`` (0-based
  characters of that sentence, ``start < end <= len``), ``annotator``, optional ``type`` (a text, or a list of
  different texts for a span of several types, as XSumFaith's workers mark an error both intrinsic and extrinsic: a
  row each); the ``label_spans`` table (with the marked text).
* The header (optional, first line): ``question``, the text annotators answered (it goes with every label of
  the file, the labelers show it, and labels that answered different questions are never pooled); ``targets``
  and ``metrics``, name -> ``{"direction": "higher" | "lower", "description": text}`` (the ``variables``
  table). With a header, every ``human`` name must be one of its targets, and a metric it declares says which
  way is better. A file without one imports as before (``score`` is ``human_score``), its labels taken to answer
  :data:`NO_HEADER_QUESTION`, with a warning saying so (before, SJC's agent question was assumed without a word).

Any other field is an error (a misspelt ``lables`` would otherwise drop every label silently). Each bad record is
a ``FILE:LINE: field 'x': expected ..., got ...`` error, and nothing is written unless the whole file is good.

The tables: each summary is a run (``run_id`` = ``id``, ``task_id`` = ``scenario_id`` = ``source_id``, ``method``
= ``system``, ``subset`` = ``dataset``, ``split``, ``human_score`` = ``score``); each source passage a step (tool
``source``, its text the observation: the history the summary replaced, which the judges retrieve evidence from);
the summary a compaction at boundary 0 replacing every step; each sentence an entry (section ``Summary``, role
``other``, schema ``given``: the input gave it, and no verb splits the summary again, so label ids stay valid); the labels a ``labels`` table, which ``workbench import`` writes into the annotation store at
``DIR/annotations`` under each annotator's own name.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from workbench.tables import _schema as schema
from workbench.summaries._entries import entry_id
from workbench._util.jsonl import at_line, json_lines
from workbench.errors import SchemaError
from workbench.errors import describe_value
from workbench.tables._vocabulary import LABEL_VALUES

__all__ = ["NO_HEADER_QUESTION", "read_labelled_summaries", "split_sentences"]

#: the fields a record may have
FIELDS = ("id", "source_id", "system", "source", "summary", "sentences", "labels", "score", "split", "dataset",
          "metrics", "meta", "human", "spans")
#: the fields of the optional header line, and of each variable it declares
HEADER_FIELDS = ("question", "targets", "metrics")
_VARIABLE_FIELDS = ("direction", "description")
_SPAN_FIELDS = ("sentence", "start", "end", "annotator", "type")
#: the ``schema`` of entries the input gave (its sentences): kept as they are by every verb, never split again
GIVEN = "given"
#: the section every sentence stands under
SECTION = "Summary"
_LABEL_FIELDS = ("sentence", "annotator", "value", "note", "field")

# A sentence ends at ".", "!" or "?" (with any closing quotes or brackets after it) followed by white space and a
# capital letter, a digit or an opening quote; not after a one-letter initial ("J. Smith") or a title or Latin
# abbreviation of ABBREVIATIONS.
ABBREVIATIONS = ("Mr", "Mrs", "Ms", "Dr", "Prof", "Sr", "Jr", "St", "Gen", "Gov", "Sen", "Rep", "Lt", "Col", "Capt",
                 "Sgt", "vs", "etc", "e.g", "i.e", "No", "Inc", "Ltd", "Co", "U.S", "U.K")
_END = re.compile(r"""(?<=[.!?])["'”’)\]]*\s+(?=["'“‘(\[]?[A-Z0-9])""")


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` by the rule above (documented in the module; no model or download): whitespace at
    the cut is dropped, each sentence keeps its own characters, and a text without a sentence end is one
    sentence. Empty text gives no sentence.

    Parameters
    ----------
    text : str
        The text to split.

    Returns
    -------
    list of str
        Its sentences, in order.
    """
    out: list[str] = []
    start = 0
    for m in _END.finditer(text):
        word = _word_before(text, start, m.start())
        if (len(word) == 1 and word.isalpha()) or word in ABBREVIATIONS:
            continue
        piece = text[start:m.start()].strip() + text[m.start():m.end()].strip()
        if piece.strip():
            out.append(piece.strip())
        start = m.end()
    rest = text[start:].strip()
    if rest:
        out.append(rest)
    return out


def _word_before(text: str, start: int, end: int) -> str:
    """The word a sentence end at ``end`` follows (``Dr`` of ``... Dr.``): the non-space run before the final
    ``.``, ``!`` or ``?`` of ``text[start:end]`` (closing quotes and brackets stripped), read backwards from the
    end, so that a run of abbreviations ("Dr. Dr. Dr. ...", where ``start`` stays put) costs linear time, not
    the whole text again at every candidate end."""
    while end > start and text[end - 1] in "\"'”’)]":
        end -= 1
    if end - start < 2 or text[end - 1] not in ".!?":
        return ""
    first = end - 1
    while first > start and not text[first - 1].isspace():
        first -= 1
    return text[first:end - 1]


def _finite(value: object, *, nan: bool = False) -> bool:
    """Whether ``value`` is a number a float holds (a 400-digit integer is not: ``float`` overflows); NaN counts
    as missing where ``nan``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        number = float(value)
    except OverflowError:
        return False
    return math.isfinite(number) or (nan and number != number)


def _short(value: object) -> str:
    """A value as an error shows it, a long number cut (a 400-digit score)."""
    text = describe_value(value)
    return text if len(text) <= 80 else f"{text[:60]}... ({len(text)} characters)"


def _text(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise SchemaError(field=field, expected="text", got=describe_value(value))
    return value


def check_summary(record: object) -> dict[str, Any]:
    """The record checked field by field (SchemaError names the field; the caller adds ``FILE:LINE``)."""
    if not isinstance(record, dict):
        raise SchemaError(expected="a JSON object (one labelled summary)", got=describe_value(record))
    unknown = [k for k in record if k not in FIELDS]
    if unknown:
        raise SchemaError(field=unknown[0], expected=f"one of the fields {list(FIELDS)}", got="an unknown field")
    for name in ("id", "source_id", "source", "summary"):
        if name not in record:
            raise SchemaError(field=name, expected="a value (required)", got="nothing")
    rid = _text(record["id"], "id")
    if not rid.strip():
        raise SchemaError(field="id", expected="a non-empty text", got=repr(rid))
    _text(record["source_id"], "source_id")
    source = record["source"]
    if isinstance(source, str):
        passages = [source]
    elif isinstance(source, list) and all(isinstance(p, str) for p in source):
        passages = list(source)
    else:
        raise SchemaError(field="source", expected="a text or a list of texts", got=describe_value(source))
    if not any(p.strip() for p in passages):
        raise SchemaError(field="source", expected="some source text", got="only empty text")
    summary = _text(record["summary"], "summary")
    sentences = record.get("sentences")
    if sentences is None:
        sentences = split_sentences(summary)
        if not sentences:
            raise SchemaError(field="summary", expected="a summary with at least one sentence", got="empty text")
    elif not (isinstance(sentences, list) and sentences and all(isinstance(t, str) and t.strip() for t in sentences)):
        raise SchemaError(field="sentences", expected="a non-empty list of non-empty texts",
                          got=describe_value(sentences))
    system = record.get("system")
    if system is not None:
        _text(system, "system")
    score = record.get("score")
    if score is not None and not _finite(score):
        raise SchemaError(field="score", expected="a finite number", got=_short(score))
    for name in ("split", "dataset"):
        if record.get(name) is not None:
            _text(record[name], name)
    metrics = record.get("metrics") or {}
    if not isinstance(metrics, dict):
        raise SchemaError(field="metrics", expected="an object of metric name -> number", got=describe_value(metrics))
    for name, value in metrics.items():
        if value is not None and not _finite(value, nan=True):
            raise SchemaError(field=f"metrics.{name}", expected="a number or null", got=_short(value))
    meta = record.get("meta") or {}
    if not isinstance(meta, dict):
        raise SchemaError(field="meta", expected="an object of name -> value", got=describe_value(meta))
    for name, value in meta.items():
        if value is not None and not (isinstance(value, (str, bool)) or _finite(value, nan=True)):
            raise SchemaError(field=f"meta.{name}", expected="a text, number, boolean or null", got=_short(value))
        if isinstance(value, int) and not isinstance(value, bool) and not -2**63 <= value < 2**63:
            raise SchemaError(field=f"meta.{name}", expected="a whole number within 64 bits", got=_short(value))
    for group, prefix, names in (("metrics", "metric_", metrics), ("meta", "meta_", meta)):
        columns: dict[str, str] = {}
        for name in names:
            column = run_column(prefix, name)
            if column == prefix:
                raise SchemaError(field=f"{group}.{name}", expected=f"a name with a letter or digit (it becomes the run "
                                  f"column {prefix}NAME)", got=repr(name))
            if column in columns:
                raise SchemaError(field=f"{group}.{name}", expected="a name whose run column no other name shares",
                                  got=f"{name!r} and {columns[column]!r}, both column {column}")
            columns[column] = name
    human = record.get("human") or {}
    if not isinstance(human, dict):
        raise SchemaError(field="human", expected="an object of target name -> number or null", got=describe_value(human))
    for name, value in human.items():
        if value is not None and not _finite(value):
            raise SchemaError(field=f"human.{name}", expected="a finite number or null", got=_short(value))
        if run_column("human_", name) in ("human_", "human_score"):
            raise SchemaError(field=f"human.{name}", expected="a name with a letter or digit, other than 'score' "
                              "(the score field is human_score)", got=repr(name))
    spans = record.get("spans") or []
    if not isinstance(spans, list):
        raise SchemaError(field="spans", expected="a list of spans", got=describe_value(spans))
    checked_spans = [_check_span(span, i, sentences) for i, span in enumerate(spans)]
    labels = record.get("labels") or []
    if not isinstance(labels, list):
        raise SchemaError(field="labels", expected="a list of labels", got=describe_value(labels))
    seen: dict[tuple[int, str, str], int] = {}
    checked = []
    for i, label in enumerate(labels):
        checked.append(_check_label(label, i, len(sentences), seen))
    return {"id": rid, "source_id": record["source_id"], "system": system, "passages": passages,
            "summary": summary, "sentences": list(sentences), "labels": checked, "score": score,
            "split": record.get("split"), "dataset": record.get("dataset"), "metrics": metrics, "meta": meta,
            "human": human, "spans": checked_spans}


def _sentence_index(value: object, where: str, n_sentences: int) -> int:
    """A label's or span's ``sentence``: the index of one of the summary's sentences, else the error naming it."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n_sentences:
        raise SchemaError(field=f"{where}.sentence", expected=f"the index of one of the summary's {n_sentences} "
                          f"sentence(s) (0 to {n_sentences - 1})", got=describe_value(value))
    return value


def _annotator(value: object, where: str) -> str:
    """A label's or span's ``annotator``, checked as the annotation store checks names, the error naming the field."""
    from workbench.tables._vocabulary import check_annotator

    try:
        return check_annotator(value)
    except SchemaError as err:
        raise SchemaError(field=f"{where}.annotator", expected=err.expected, got=err.got) from None


def _check_span(span: object, i: int, sentences: list[str]) -> dict[str, Any]:
    where = f"spans[{i}]"
    if not isinstance(span, dict):
        raise SchemaError(field=where, expected="an object with sentence, start, end and annotator",
                          got=describe_value(span))
    unknown = [k for k in span if k not in _SPAN_FIELDS]
    if unknown:
        raise SchemaError(field=f"{where}.{unknown[0]}", expected=f"one of {list(_SPAN_FIELDS)}", got="an unknown field")
    sentence = _sentence_index(span.get("sentence"), where, len(sentences))
    size = len(sentences[sentence])
    start, end = span.get("start"), span.get("end")
    for name, value in (("start", start), ("end", end)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= size:
            raise SchemaError(field=f"{where}.{name}", expected=f"a character offset in sentence {sentence} (0 to "
                              f"{size})", got=describe_value(value))
    if not start < end:  # type: ignore[operator]
        raise SchemaError(field=where, expected="start before end", got=f"start {start}, end {end}")
    annotator = _annotator(span.get("annotator"), where)
    kind = span.get("type")
    kinds: list[str | None] = [None]
    if isinstance(kind, list):  # one span of several types (an error both intrinsic and extrinsic): a row each
        if not kind or len(set(map(str, kind))) != len(kind):
            raise SchemaError(field=f"{where}.type", expected="a type, or a list of different types",
                              got=describe_value(kind))
        kinds = [_text(k, f"{where}.type[{j}]") for j, k in enumerate(kind)]
    elif kind is not None:
        kinds = [_text(kind, f"{where}.type")]
    return {"sentence": sentence, "start": start, "end": end, "annotator": annotator, "types": kinds,
            "text": sentences[sentence][start:end]}


def check_header(raw: object) -> dict[str, Any]:
    """The header line checked (SchemaError names the field): ``question`` (text or None), ``targets`` and
    ``metrics`` (name -> ``{"direction", "description"}``)."""
    header = raw.get("header") if isinstance(raw, dict) else None
    if not isinstance(header, dict) or len(raw) != 1:  # type: ignore[arg-type]
        raise SchemaError(field="header", expected="a line {\"header\": {...}} and nothing else",
                          got=describe_value(raw))
    unknown = [k for k in header if k not in HEADER_FIELDS]
    if unknown:
        raise SchemaError(field=f"header.{unknown[0]}", expected=f"one of {list(HEADER_FIELDS)}", got="an unknown field")
    question = header.get("question")
    if question is not None and not (isinstance(question, str) and question.strip()):
        raise SchemaError(field="header.question", expected="the text annotators answered", got=describe_value(question))
    out: dict[str, Any] = {"question": question}
    for group in ("targets", "metrics"):
        declared = header.get(group) or {}
        if not isinstance(declared, dict):
            raise SchemaError(field=f"header.{group}", expected="an object of name -> {direction, description}",
                              got=describe_value(declared))
        checked = {}
        for name, spec in declared.items():
            where = f"header.{group}.{name}"
            spec = {} if spec is None else spec
            if not isinstance(spec, dict):
                raise SchemaError(field=where, expected="an object {direction, description}", got=describe_value(spec))
            extra = [k for k in spec if k not in _VARIABLE_FIELDS]
            if extra:
                raise SchemaError(field=f"{where}.{extra[0]}", expected=f"one of {list(_VARIABLE_FIELDS)}",
                                  got="an unknown field")
            direction = spec.get("direction")
            if direction not in (None, "higher", "lower"):
                raise SchemaError(field=f"{where}.direction", expected="'higher' or 'lower' (which way is better)",
                                  got=describe_value(direction))
            description = spec.get("description")
            if description is not None:
                _text(description, f"{where}.description")
            checked[name] = {"direction": direction, "description": description}
        out[group] = checked
    return out


def _check_label(label: object, i: int, n_sentences: int, seen: dict[tuple[int, str, str], int]) -> dict[str, Any]:
    where = f"labels[{i}]"
    if not isinstance(label, dict):
        raise SchemaError(field=where, expected="an object with sentence, annotator and value",
                          got=describe_value(label))
    unknown = [k for k in label if k not in _LABEL_FIELDS]
    if unknown:
        raise SchemaError(field=f"{where}.{unknown[0]}", expected=f"one of {list(_LABEL_FIELDS)}",
                          got="an unknown field")
    sentence = _sentence_index(label.get("sentence"), where, n_sentences)
    field = label.get("field", "support")
    if field not in LABEL_VALUES:
        raise SchemaError(field=f"{where}.field", expected=f"one of {list(LABEL_VALUES)}", got=describe_value(field))
    value = label.get("value")
    if value not in LABEL_VALUES[field]:
        raise SchemaError(field=f"{where}.value", expected=f"one of {list(LABEL_VALUES[field])} (field {field!r})",
                          got=describe_value(value))
    annotator = _annotator(label.get("annotator"), where)
    note = label.get("note")
    if note is not None:
        _text(note, f"{where}.note")
    key = (sentence, annotator, field)
    if key in seen:
        raise SchemaError(field=where, expected="one label per sentence, annotator and field",
                          got=f"a second {field} label of sentence {sentence} by {annotator!r} "
                              f"(the first is labels[{seen[key]}])")
    seen[key] = i
    return {"sentence": sentence, "annotator": annotator, "field": field, "value": value, "note": note}


def checked_records(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, checked record) for each line of a labelled-summaries file; a duplicate ``id`` is an error naming
    both lines."""
    path = Path(path)
    first: dict[str, int] = {}
    columns: dict[str, tuple[str, int]] = {}  # run column -> the metric or meta name that made it, and its line
    kinds: dict[str, tuple[str, int]] = {}  # meta name -> the kind of its values (number, boolean, text), and a line
    header: dict[str, Any] | None = None
    for number, raw in json_lines(path):
        with at_line(path, number):
            if isinstance(raw, dict) and "header" in raw:
                if first or header is not None:
                    raise SchemaError(field="header", expected="the header on the first line only",
                                      got="a second header" if header is not None else "a header after the summaries")
                header = check_header(raw)
                yield number, {"header": header}
                continue
            record = check_summary(raw)
            if header is not None:
                declared = header["targets"]
                unknown = [name for name in record["human"] if name not in declared]
                if unknown:
                    raise SchemaError(field=f"human.{unknown[0]}", expected=f"a target the header declares "
                                      f"({sorted(declared) or 'none'})", got=repr(unknown[0]))
                record["question"] = header["question"]
            if record["id"] in first:
                raise SchemaError(field="id", expected="an id no other record has",
                                  got=f"{record['id']!r}, the id of line {first[record['id']]}")
            first[record["id"]] = number
            for group, prefix in (("metrics", "metric_"), ("meta", "meta_")):
                for name in record[group]:
                    column = run_column(prefix, name)
                    made = columns.setdefault(column, (name, number))
                    if made[0] != name:
                        raise SchemaError(field=f"{group}.{name}", expected="a name whose run column no other name "
                                          "shares", got=f"{name!r} and {made[0]!r} of line {made[1]}, both column "
                                          f"{column}")
            for name, value in record["meta"].items():
                if value is not None:
                    kind = "boolean" if isinstance(value, bool) else "text" if isinstance(value, str) else "number"
                    had = kinds.setdefault(name, (kind, number))
                    if had[0] != kind:
                        raise SchemaError(field=f"meta.{name}", expected=f"a {had[0]}, as on line {had[1]} (one "
                                          "kind per field)", got=_short(value))
        yield number, record


def read_labelled_summaries(path: str | os.PathLike[str]) -> dict[str, pl.DataFrame]:
    """The tables of a labelled-summaries file (runs, steps, compactions, entries, labels, and with spans or a
    header ``label_spans`` and ``variables``); see the module docstring.

    Parameters
    ----------
    path : str or os.PathLike
        A labelled-summaries JSONL file (plain or gzip-compressed), its first line optionally a header.

    Returns
    -------
    dict of str to polars.DataFrame
        The tables read (``runs``, ``steps``, ``compactions``, and the others the format carries), validated.
    """
    records = [{**record, "_line": number} for number, record in checked_records(path)]
    if records and "header" not in records[0]:  # the question the labels answered is not said: say what is assumed
        import warnings

        from workbench._util.jsonl import LogWarning

        warnings.warn(LogWarning(f"{path}: no header line, so the question its labels answered is not said: taken as "
                                 f"{NO_HEADER_QUESTION!r} (not SJC's question about agent summaries); a first line "
                                 '{"header": {"question": "..."}} gives the data\'s own'), stacklevel=2)
        records = [{**r, "question": NO_HEADER_QUESTION} for r in records]
    return records_to_tables(records, file=str(path))


#: the question a labelled-summaries file without a header is taken to have asked (the labelers show it, and it goes
#: with every label): the question of consistency with the source that such data sets ask, never SJC's about agent
#: summaries and tool results
NO_HEADER_QUESTION = "Is everything this sentence states supported by the source passages?"


def run_column(prefix: str, name: str) -> str:
    """The run column a record's ``metrics`` or ``meta`` entry goes to: ``prefix`` and ``name`` with every run of
    non-word characters as ``_`` (``metric_BertScore_P_Art``)."""
    return prefix + re.sub(r"\W+", "_", name).strip("_")


def records_to_tables(records: Iterable[Mapping[str, Any]], file: str | None = None) -> dict[str, pl.DataFrame]:
    """Checked records (``checked_records``) as the workbench's tables, validated by their declarations.
    ``metrics`` become run columns ``metric_NAME``, ``meta`` ``meta_NAME`` and ``human`` ``human_NAME`` (non-word
    characters as ``_``); a header record (``{"header": ...}``, first) gives every label its question and the
    ``variables`` table. A record's ``_line`` (its line in ``file``) is where an error in a table row it made
    points (``FILE:LINE``), not the table's internal row."""
    header: dict[str, Any] | None = None
    lines: dict[str, list[int | str]] = {name: [] for name in ("runs", "steps", "compactions", "entries", "labels",
                                                              "label_spans")}
    spans: list[dict[str, Any]] = []
    runs: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    compactions: list[dict[str, Any]] = []
    entries: list[dict[str, Any]] = []
    labels: list[dict[str, Any]] = []
    for r in records:
        if "header" in r:
            header = r["header"]
            continue
        rid, passages = r["id"], r["passages"]
        run = {"run_id": rid, "task_id": r["source_id"], "scenario_id": r["source_id"], "method": r["system"],
               "subset": r["dataset"], "split": r["split"], "human_score": None if r["score"] is None
               else float(r["score"]), "steps": len(passages), "compactions": 1}
        run.update({run_column("metric_", k): None if v is None else float(v) for k, v in r["metrics"].items()})
        run.update({run_column("meta_", k): v for k, v in r["meta"].items()})
        run.update({run_column("human_", k): None if v is None else float(v) for k, v in r.get("human", {}).items()})
        if r.get("question"):
            run["question"] = r["question"]
        runs.append(run)
        steps.extend({"run_id": rid, "step": i, "tool": "source", "observation": text, "observation_role": "tool"}
                     for i, text in enumerate(passages))
        compactions.append({"run_id": rid, "boundary": 0, "step": len(passages), "span_start": 0,
                            "span_end": len(passages) - 1, "candidate_summary": r["summary"],
                            "committed_summary": r["summary"]})
        entries.extend({"entry_id": entry_id(rid, 0, k), "run_id": rid, "boundary": 0, "section": SECTION,
                        "position": k, "text": text, "role": "other", "schema": GIVEN}
                       for k, text in enumerate(r["sentences"]))
        labels.extend({"item_id": entry_id(rid, 0, lab["sentence"]), "annotator": lab["annotator"], "round": 1,
                       "field": lab["field"], "value": lab["value"], "note": lab["note"],
                       "question": r.get("question")} for lab in r["labels"])
        spans.extend({"item_id": entry_id(rid, 0, sp["sentence"]), "annotator": sp["annotator"], "start": sp["start"],
                      "end": sp["end"], "type": kind, "text": sp["text"]} for sp in r.get("spans", [])
                     for kind in sp["types"])
        line = r.get("_line", f"record {len(runs)}")
        for name, made in (("runs", runs), ("steps", steps), ("compactions", compactions), ("entries", entries),
                           ("labels", labels), ("label_spans", spans)):
            lines[name] += [line] * (len(made) - len(lines[name]))
    if not runs:
        raise SchemaError("no labelled summaries", expected="at least one record")
    from workbench.tables._files import rows_frame
    from workbench.tables._validation import validate

    frames = {"runs": rows_frame("runs", runs), "steps": rows_frame("steps", steps),
              "compactions": rows_frame("compactions", compactions), "entries": rows_frame("entries", entries)}
    def lines_of(name: str) -> list[int | str] | None:  # each row's input line, where the records came from a file
        return lines[name] if file is not None else None

    out = {name: validate(name, frame, file=file, lines=lines_of(name)) for name, frame in frames.items()}
    out["labels"] = validate("labels", rows_frame("labels", labels), file=file, lines=lines_of("labels")) \
        if labels else schema.empty("labels")
    if spans:
        out["label_spans"] = validate("label_spans", rows_frame("label_spans", spans), file=file,
                                      lines=lines_of("label_spans"))
    if header is not None and (header["targets"] or header["metrics"]):
        variables = [{"name": name, "kind": kind, "column": run_column(prefix, name), **spec}
                     for group, kind, prefix in (("targets", "target", "human_"), ("metrics", "metric", "metric_"))
                     for name, spec in header[group].items()]
        out["variables"] = validate("variables", rows_frame("variables", variables))
    return out
