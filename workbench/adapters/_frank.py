"""FRANK (Pagnoni, Balachandran and Tsvetkov, NAACL 2021; MIT) as labelled summaries: ``workbench import DIR
--format frank``.

``DIR`` is either FRANK's own files (``human_annotations.json``, ``baseline_factuality_metrics_outputs.json`` and
``articles-wbertscore-json/HASH.json``, as in ``../shared/data/human-labels/frank``) or the project's compact copy
(``data/benchmarks/frank``: the same two JSON files gzip-compressed byte for byte, and ``articles.jsonl.gz``, one
line per article with its ``hash``, its ``article_lines`` and, for each annotated system, the summary and its
``_lines``; ``tools/compact_frank.py`` makes it).

Each annotated summary (article ``hash``, system ``model_name``) becomes one labelled summary
(:mod:`workbench.adapters._labelled_summaries`): id ``MODEL:HASH``, source id the article's hash, source its
``article_lines`` (one passage each), sentences the summary's ``MODEL_lines``, score ``Factuality``, its
``dataset`` (cnndm or bbc) and ``split`` (valid or test), the published scores of every baseline metric as
``metrics`` and the error-type fields as ``meta``. A one-sentence summary's ``Factuality`` is a sentence label
(field ``support``, annotator ``frank``): ``supported`` if it is 1, else ``unsupported``. FRANK's "no error" covers
every error type, grammar, coreference and discourse links included, so it is broader than "supported by the
source".
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl

from workbench.errors import SchemaError, describe_value

__all__ = ["RELEASE", "DEFAULT_METRICS", "read_frank"]

#: what the runs' ``meta_release`` says of every summary read from FRANK's files: the published numbers (its
#: correlation table) are FRANK's on these rows, and on no other data
RELEASE = "FRANK"
#: the annotator FRANK's sentence labels are stored under
ANNOTATOR = "frank"
#: the ten metrics FRANK's evaluation script reports by default (``evaluation/evaluate.py``)
DEFAULT_METRICS = ("Bleu", "Meteor", "Rouge 1", "Rouge 2", "Rouge L", "BertScore P Art", "FEQA", "QAGS",
                   "Dep Entail", "FactCC")
#: every metric column of FRANK's score file
BASELINE_METRICS = ("Rouge 1", "Rouge 2", "Rouge L", "Bleu", "Meteor", "BertScore P", "BertScore R", "BertScore F1",
                    "BertScore P Art", "BertScore R Art", "BertScore F1 Art", "FactCC", "FEQA", "Dep Entail", "QAGS")
_KEYS = ("hash", "model_name", "dataset", "Factuality", "split")


def read_json(path: Path) -> Any:
    """A JSON file, or its gzip-compressed copy ``PATH.gz`` when only that is there; errors name the file."""
    for candidate in (path, path.with_name(path.name + ".gz")):
        if candidate.exists():
            try:
                if candidate.suffix == ".gz":
                    with gzip.open(candidate, "rt", encoding="utf-8") as fh:
                        return json.load(fh)
                return json.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, EOFError, ValueError) as err:
                raise SchemaError(f"not readable JSON ({type(err).__name__}: {err})", file=str(candidate)) from None
    raise SchemaError(f"no {path.name} (or {path.name}.gz); expected FRANK's files", file=str(path.parent))


def is_frank(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a FRANK directory (its human annotations, plain or compressed)."""
    p = Path(path)
    return p.is_dir() and any((p / f"human_annotations.json{s}").exists() for s in ("", ".gz"))


def _articles(path: Path) -> Iterator[tuple[str, int | str, Any]]:
    """(file, line or record, article) for every article of the directory, compact or FRANK's own."""
    compact = path / "articles.jsonl.gz"
    if compact.exists():
        from workbench._util.jsonl import json_lines

        for number, record in json_lines(compact):
            yield str(compact), number, record
        return
    folder = path / "articles-wbertscore-json"
    if not folder.is_dir():
        raise SchemaError("no articles (articles-wbertscore-json/ or articles.jsonl.gz); expected FRANK's files",
                          file=str(path))
    for file in sorted(folder.glob("*.json")):
        yield str(file), "(top level)", read_json(file)


def _check(ok: bool, file: str, line: int | str, field: str, expected: str, got: object) -> None:
    """A malformed FRANK file as a located error (file, record, field), never an internal one."""
    if not ok:
        raise SchemaError(file=file, line=line, field=field, expected=expected,
                          got=got if isinstance(got, str) else describe_value(got))


def _records(path: Path, name: str, what: str) -> list[dict[str, Any]]:
    """One of FRANK's two JSON files: a list of objects, each checked to be one."""
    data = read_json(path / name)
    _check(isinstance(data, list), str(path / name), "(top level)", "(top level)", f"a list of {what}", data)
    for i, record in enumerate(data):
        _check(isinstance(record, dict), str(path / name), f"record {i + 1}", "(record)", f"{what[:-1]} (an object)",
               record)
    return data


def frank_records(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """FRANK's annotated summaries as labelled-summaries records (see the module docstring), in the order of
    ``human_annotations.json``. A malformed file -- a record that is not an object, a missing or non-text
    ``hash`` or ``model_name``, an article without its lines, an article or a score given twice, a ``Factuality``
    outside 0 to 1 -- is an error naming the file, the record and the field."""
    path = Path(path)
    annotations = _records(path, "human_annotations.json", "annotations")
    scores = _records(path, "baseline_factuality_metrics_outputs.json", "metric scores")
    metrics: dict[tuple[str, str], dict[str, Any]] = {}
    score_file = str(path / "baseline_factuality_metrics_outputs.json")
    for i, r in enumerate(scores):
        for field in ("hash", "model_name"):
            _check(isinstance(r.get(field), str), score_file, f"record {i + 1}", field, "a text", r.get(field))
        key = (r["hash"], r["model_name"])
        _check(key not in metrics, score_file, f"record {i + 1}", "hash", "one score record per article and system",
               f"{key[1]} on {key[0]!r} again")
        metrics[key] = {m: r.get(m) for m in BASELINE_METRICS if m in r}
    articles: dict[str, tuple[dict[str, Any], str]] = {}  # hash -> the article, and where it was read
    for file, line, article in _articles(path):
        _check(isinstance(article, dict), file, line, "(article)", "an article (an object)", article)
        _check(isinstance(article.get("hash"), str), file, line, "hash", "the article's hash (a text)",
               article.get("hash"))
        lines = article.get("article_lines")
        _check(isinstance(lines, list) and all(isinstance(x, str) for x in lines), file, line, "article_lines",
               "the article's sentences (a list of texts)", lines)
        _check(article["hash"] not in articles, file, line, "hash", "each article once",
               f"{article['hash']!r}, also at {articles.get(article['hash'], (None, ''))[1]}")
        articles[article["hash"]] = (article, f"{file}:{line}")
    annotation_file = str(path / "human_annotations.json")
    for i, ann in enumerate(annotations):
        where = f"record {i + 1}"
        for field in ("hash", "model_name"):
            _check(isinstance(ann.get(field), str), annotation_file, where, field, "a text", ann.get(field))
        key = (ann["hash"], ann["model_name"])
        _check(key[0] in articles, annotation_file, where, "hash", "an article of the articles", repr(key[0]))
        article, model = articles[key[0]][0], key[1]
        summary_lines: Any = article.get(f"{model}_lines")  # a list, or the check below refuses it
        _check(isinstance(summary_lines, list) and isinstance(article.get(model), str), annotation_file, where,
               "model_name", f"a system whose summary ({model}, {model}_lines) the article holds", repr(model))
        sentences = [s for s in summary_lines if isinstance(s, str) and s.strip()]
        factuality = ann.get("Factuality")
        _check(factuality is None or (isinstance(factuality, (int, float)) and not isinstance(factuality, bool)
                                      and 0 <= factuality <= 1),
               annotation_file, where, "Factuality", "a number from 0 to 1 (the share of annotators who found no "
               "error)", factuality)
        record: dict[str, Any] = {
            "id": f"{model}:{key[0]}", "source_id": key[0], "system": model, "source": article["article_lines"],
            "summary": article[model], "sentences": sentences, "score": factuality, "split": ann.get("split"),
            "dataset": ann.get("dataset"), "metrics": metrics.get(key, {}),
            "meta": {**{k: v for k, v in ann.items() if k not in _KEYS}, "release": RELEASE}}
        if len(sentences) == 1 and factuality is not None:
            record["labels"] = [{"sentence": 0, "annotator": ANNOTATOR,
                                 "value": "supported" if factuality == 1 else "unsupported"}]
        yield record


def read_frank(path: str | os.PathLike[str]) -> dict[str, pl.DataFrame]:
    """The tables of FRANK (``frank_records`` through the labelled-summaries checks and tables).

    Parameters
    ----------
    path : str or os.PathLike
        FRANK's directory (its ``human_annotations`` and ``baseline_factuality_metrics`` files, plain or
        gzip-compressed), as ``data/benchmarks/frank/`` holds it.

    Returns
    -------
    dict of str to polars.DataFrame
        The tables read (``runs``, ``steps``, ``compactions``, and the others the format carries), validated.
    """
    from workbench.adapters._labelled_summaries import check_summary, records_to_tables

    checked = []
    for i, record in enumerate(frank_records(path)):
        try:
            checked.append(check_summary(record))
        except SchemaError as err:
            raise err.located(str(Path(path) / "human_annotations.json"), f"record {i + 1}") from None
    return records_to_tables(checked)
