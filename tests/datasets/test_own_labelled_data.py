"""A researcher's own labelled summaries, taken through the verbs a new user runs (issue 59): the file is made here,
by hand, with its own sentences and labels, so nothing in it is the project's own data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

WORKBENCH = str(Path(sys.executable).parent / "workbench")
ROOT = Path(__file__).resolve().parents[2]

#: two news summaries; the second sentence of the first is labelled, and the splitter would cut its sentences
#: elsewhere ("approx. 3 million" holds an abbreviation the given sentences keep whole)
RECORDS = [
    {"id": "n1", "source_id": "a1", "system": "pegasus",
     "source": "The council approved the new park on Monday. Construction starts in May and costs 2 million dollars.",
     "summary": "The council approved a park. It costs approx. 3 million dollars. Work starts in May.",
     "sentences": ["The council approved a park.", "It costs approx. 3 million dollars.", "Work starts in May."],
     "labels": [{"sentence": 1, "annotator": "ann1", "value": "unsupported"},
                {"sentence": 2, "annotator": "ann1", "value": "supported"}],
     "score": 0.5, "metrics": {"rouge": 0.4, "qa": None}},
    {"id": "n2", "source_id": "a2", "system": "bart",
     "source": "Shares of Acme fell 5 percent after the earnings report.",
     "summary": "Acme shares fell 5 percent. The CEO resigned.",
     "labels": [{"sentence": 0, "annotator": "ann1", "value": "supported"},
                {"sentence": 1, "annotator": "ann1", "value": "unsupported"}],
     "score": 0.0, "metrics": {"rouge": 0.6, "qa": 0.3}},
]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([WORKBENCH, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def own_file(tmp_path: Path) -> Path:
    path = tmp_path / "own.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    return path


def test_given_sentences_are_the_entries_of_every_verb(own_file: Path, tmp_path: Path) -> None:
    """Before: ``import --entries`` split the summaries again (the entries parser, not the file's sentences), so the
    label on sentence 1 named an entry that no longer existed: an internal SelectionError; ``workbench entries``
    did the same to a labelled import. Now the given sentences are the entries, byte for byte, every label names
    one, and ``workbench entries`` keeps them."""
    out = tmp_path / "own"
    imported = run("import", str(own_file), "--out", str(out), "--entries")
    assert imported.returncode == 0, imported.stderr
    entries = pl.read_parquet(out / "entries.parquet").sort("run_id", "position")
    given = [s for r in RECORDS for s in (r.get("sentences") or [])]
    assert entries.filter(pl.col("run_id") == "n1").get_column("text").to_list() == given
    assert entries.filter(pl.col("run_id") == "n2").get_column("text").to_list() == ["Acme shares fell 5 percent.",
                                                                                     "The CEO resigned."]
    labelled = {json.loads(line)["item_id"] for f in (out / "annotations").rglob("*.jsonl")
                for line in f.read_text().splitlines()}
    assert labelled == {"n1/b0/e1", "n1/b0/e2", "n2/b0/e0", "n2/b0/e1"} <= set(entries.get_column("entry_id"))
    again = run("entries", str(out))
    assert again.returncode == 0 and "4 entries" not in again.stdout and "5 entries, as the log gave them" in again.stdout
    assert pl.read_parquet(out / "entries.parquet").sort("run_id", "position").equals(entries)


def test_frank_import_with_entries_keeps_franks_4942_sentences(tmp_path: Path) -> None:
    """FRANK's release gives each annotated summary as its sentences (``MODEL_lines`` of the article's file): 4,942
    of them; ``--entries`` gave 2,245 re-split entries. Counted here from the release's files themselves."""
    import gzip

    release = ROOT / "data" / "benchmarks" / "frank"
    articles = {a["hash"]: a for a in map(json.loads, gzip.open(release / "articles.jsonl.gz", "rt"))}
    annotated = json.load(gzip.open(release / "human_annotations.json.gz"))
    expected = sum(len(articles[r["hash"]][r["model_name"] + "_lines"]) for r in annotated)
    out = tmp_path / "frank"
    imported = run("import", str(release), "--out", str(out), "--entries")
    assert imported.returncode == 0, imported.stderr
    assert pl.read_parquet(out / "entries.parquet").height == expected == 4942


def test_import_force_never_leaves_another_logs_labels_beside_new_entries(own_file: Path, tmp_path: Path) -> None:
    """Before: ``import --force`` replaced the tables and kept ``annotations/``, so an old label attached itself to
    the new log's entry of the same id. Now a directory whose store holds labels is refused (exit 2, nothing
    changed) with how to keep them, for a labelled log and for any other."""
    out = tmp_path / "own"
    assert run("import", str(own_file), "--out", str(out)).returncode == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    for log in (own_file, ROOT / "data" / "examples" / "invoice_log.jsonl"):
        refused = run("import", str(log), "--out", str(out), "--force")
        assert refused.returncode == 2 and "holds labels made on the log imported there before" in refused.stderr
        assert f"mv {out / 'annotations'}" in refused.stderr
        assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
