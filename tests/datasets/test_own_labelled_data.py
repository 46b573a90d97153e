"""A researcher's own labelled summaries, taken through the verbs a new user runs (issue 59): the file is made here,
by hand, with its own sentences and labels, so nothing in it is the project's own data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
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
    for log in (own_file, ROOT / "workbench" / "datasets" / "example_logs" / "invoice_log.jsonl"):
        refused = run("import", str(log), "--out", str(out), "--force")
        assert refused.returncode == 2 and "holds labels made on the log imported there before" in refused.stderr
        assert f"mv {out / 'annotations'}" in refused.stderr
        assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


# -- a file with a header: its question, two targets with directions, spans, a metric with missing values ------

OWN = ROOT / "tests" / "fixtures" / "labelled_summaries" / "own_header.jsonl"


@pytest.fixture(scope="module")
def own_import(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("own") / "own"
    done = run("import", str(OWN), "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


def _fixture() -> tuple[dict, list[dict]]:
    lines = [json.loads(line) for line in OWN.read_text(encoding="utf-8").splitlines()]
    return lines[0]["header"], lines[1:]


def test_a_header_gives_the_question_the_targets_their_directions_and_the_spans(own_import: Path) -> None:
    """Issue 59: the format had one human target, no direction, no spans and no question of its own. Every value
    here is read back against the file itself."""
    header, records = _fixture()
    variables = pl.read_parquet(own_import / "variables.parquet")
    assert {(r["name"], r["kind"], r["direction"]) for r in variables.iter_rows(named=True)} == {
        *((n, "target", v["direction"]) for n, v in header["targets"].items()),
        *((n, "metric", v["direction"]) for n, v in header["metrics"].items())}
    runs = pl.read_parquet(own_import / "runs.parquet").sort("run_id")
    by_id = {r["id"]: r for r in records}
    for row in runs.iter_rows(named=True):
        assert row["human_faithful"] == by_id[row["run_id"]]["human"]["faithful"]
        assert row["human_factual"] == by_id[row["run_id"]]["human"]["factual"]  # None stays missing
        assert row["question"] == header["question"]
    spans = pl.read_parquet(own_import / "label_spans.parquet").sort("item_id")
    want = sorted((f"{r['id']}/b0/e{s['sentence']}", s["annotator"], r["sentences"][s["sentence"]][s["start"]:s["end"]])
                  for r in records for s in r.get("spans", []))
    assert list(zip(spans["item_id"], spans["annotator"], spans["text"], strict=True)) == want
    assert [t for *_, t in want] == ["3 million", "this winter"]
    labels = [json.loads(line) for f in (own_import / "annotations" / "labels").glob("*.jsonl")
              for line in f.read_text().splitlines()]
    assert len(labels) == sum(len(r["labels"]) for r in records) and {lab["question"] for lab in labels} == {
        header["question"]}
    sample = [json.loads(line) for line in (own_import / "annotations" / "samples" / "labelled.jsonl").read_text()
              .splitlines()]
    assert {item["question"] for item in sample} == {header["question"]}


def test_a_target_the_header_does_not_declare_is_a_located_error(tmp_path: Path) -> None:
    lines = OWN.read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[2])
    bad["human"]["faithfull"] = 0.5
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([lines[0], lines[1], json.dumps(bad)]) + "\n", encoding="utf-8")
    done = run("import", str(path), "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and not (tmp_path / "out").exists()
    assert "bad.jsonl:3: field 'human.faithfull': expected a target the header declares (['factual', 'faithful'])" \
        in done.stderr


def test_labels_that_answered_different_questions_are_never_pooled(own_import: Path, tmp_path: Path) -> None:
    """The imported workers answered the file's question; a person who then labels the same entries with SJC's
    agent question (the store's default) may not be pooled with them: agree stops and says why."""
    import shutil

    from workbench.annotate import AnnotationStore

    store = tmp_path / "store"
    shutil.copytree(own_import / "annotations", store)
    item = json.loads((store / "samples" / "labelled.jsonl").read_text().splitlines()[0])["item_id"]
    AnnotationStore(store).add(item_id=item, annotator="me", round=1, field="support", value="supported")
    done = run("agree", str(store))
    assert done.returncode == 2, done.stdout
    assert "one question per field" in done.stderr and "Is every fact in this sentence stated" in done.stderr


def test_every_labeler_asks_the_data_sets_question_with_no_word_of_the_agent_protocol(own_import: Path,
                                                                                      tmp_path: Path) -> None:
    """Issue 59: the labelers showed the file's question, but under it SJC's definitions ("an environment output (a
    tool result) ... establishes"). The terminal, the widget and a Label Studio export of a sample of the
    hand-made file define the values as the answers to the file's own question; SJC's wording appears in none."""
    from workbench.annotate._item_views import OWN_DEFINITIONS
    from workbench.annotate._terminal import item_lines
    from workbench.annotate._widget import _question_html

    header, _ = _fixture()
    sample, tasks = tmp_path / "s.jsonl", tmp_path / "tasks.json"
    assert run("sample", str(own_import), "--n", "4", "--out", str(sample)).returncode == 0
    assert run("labelstudio", "export", str(sample), "--out", str(tasks)).returncode == 0
    item = json.loads(sample.read_text().splitlines()[0])
    shown = {"terminal": " ".join(" ".join(item_lines(item, "support", 400)).split()),
             "widget": _question_html("support", item),
             "label studio": tasks.with_suffix(".xml").read_text()}
    for where, text in shown.items():
        assert header["question"] in text or where == "label studio", where  # Label Studio shows $question
        assert OWN_DEFINITIONS["supported"] in text, where
        assert "tool result" not in text and "environment output" not in text, where
    assert json.loads(tasks.read_text())[0]["data"]["question"] == header["question"]
    mixed = tmp_path / "mixed.jsonl"  # one item of the agent protocol beside the file's: one interface cannot fit
    agent = dict(item, item_id="run/b0/e9")
    agent.pop("question")
    mixed.write_text(sample.read_text() + json.dumps(agent) + "\n")
    done = run("labelstudio", "export", str(mixed), "--out", str(tmp_path / "m.json"))
    assert done.returncode == 2 and "items that all ask the same question" in done.stderr, done.stderr


def test_comparison_tables_are_paired_by_default_and_say_what_they_left_out() -> None:
    """Issue 59: the judge was scored on every row and the metrics on theirs, in one table, with n_missing 0.
    Hand-counted on the fixture: of the 8 summaries, 'entail' misses 2, so every paired row uses the same 6 and
    says 2 are missing; unpaired, 'rouge' uses its own 8. Plain correlations against scipy on the same rows."""
    from scipy import stats

    from workbench.analyses import correlation_table

    _, records = _fixture()
    frame = pl.DataFrame({"run_id": [r["id"] for r in records], "source_id": [r["source_id"] for r in records],
                          "system": [r["system"] for r in records], "dataset": [r["dataset"] for r in records],
                          "split": [r["split"] for r in records],
                          "faithful": [r["human"]["faithful"] for r in records],
                          "rouge": [r["metrics"]["rouge"] for r in records],
                          "entail": [r["metrics"]["entail"] for r in records]}, strict=False)
    paired = correlation_table(frame, ["rouge", "entail"], splits=("all",), human="faithful", control=None)
    assert paired.get_column("n").to_list() == [6, 6] and paired.get_column("n_missing").to_list() == [2, 2]
    own = correlation_table(frame, ["rouge", "entail"], splits=("all",), human="faithful", control=None,
                            paired=False)
    assert own.get_column("n").to_list() == [8, 6] and own.get_column("n_missing").to_list() == [0, 2]
    both = frame.drop_nulls(["rouge", "entail", "faithful"])
    x, y = both["rouge"].to_numpy(), both["faithful"].to_numpy()
    row = paired.row(0, named=True)
    assert row["pearson"] == pytest.approx(stats.pearsonr(x, y)[0], abs=1e-12)
    assert row["spearman"] == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-12)
    assert row["kendall"] == pytest.approx(stats.kendalltau(x, y)[0], abs=1e-12)
    assert row["kendall_p"] == pytest.approx(stats.kendalltau(x, y)[1], abs=1e-12)


def test_franks_plain_correlations_are_scipys_on_each_metrics_own_rows() -> None:
    """A release that ships per-summary metric scores beside human scores must give its plain correlation table:
    FRANK's plain Pearson and Spearman of every metric with Factuality, each on its own rows as published tables
    drop missing values, computed independently with scipy from the release's score file."""
    import gzip

    from scipy import stats

    from workbench.analyses import correlation_table, frank_frame

    release = ROOT / "data" / "benchmarks" / "frank"
    human = {(r["hash"], r["model_name"]): r["Factuality"]
             for r in json.load(gzip.open(release / "human_annotations.json.gz"))}
    scores = json.load(gzip.open(release / "baseline_factuality_metrics_outputs.json.gz"))
    table = correlation_table(frank_frame(release), ["BertScore P Art", "FactCC", "Dep Entail"], splits=("all",),
                              control=None, paired=False)
    for row in table.iter_rows(named=True):
        pairs = [(s[row["metric"]], human[(s["hash"], s["model_name"])]) for s in scores
                 if s.get(row["metric"]) is not None and (s["hash"], s["model_name"]) in human]
        x, y = map(list, zip(*pairs, strict=True))
        assert row["n"] == len(pairs)
        assert row["pearson"] == pytest.approx(stats.pearsonr(x, y)[0], abs=1e-10)
        assert row["spearman"] == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-10)


def test_auroc_tables_are_paired_by_default_and_match_sklearn() -> None:
    """Issue 59: an AUROC table put a score on all its rows beside another on fewer. ``summary_auroc`` of the
    fixture's 'factual == 1' (7 summaries have it): paired, 'rouge' and 'entail' both use the 5 summaries that
    have both (hand count), each equal to sklearn's AUROC on those rows; unpaired, 'rouge' uses its 7."""
    from sklearn.metrics import roc_auc_score

    from workbench.analyses import summary_auroc

    _, records = _fixture()
    frame = pl.DataFrame({"run_id": [r["id"] for r in records], "source_id": [r["source_id"] for r in records],
                          "dataset": [r["dataset"] for r in records], "split": [r["split"] for r in records],
                          "factual": [r["human"]["factual"] for r in records],
                          "rouge": [r["metrics"]["rouge"] for r in records],
                          "entail": [r["metrics"]["entail"] for r in records]}, strict=False)
    paired = summary_auroc(frame, ["rouge", "entail"], human="factual", by=(), n_boot=50)
    # n_missing: the 2 labelled summaries without both scores and the 1 without a 'factual' label (issue 79)
    assert paired.get_column("n").to_list() == [5, 5] and paired.get_column("n_missing").to_list() == [3, 3]
    own = summary_auroc(frame, ["rouge", "entail"], human="factual", by=(), n_boot=50, paired=False)
    assert own.get_column("n").to_list() == [7, 5]
    # large enough for an AUROC (5 of each class): 40 summaries, a metric missing on every fourth
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 40).astype(float)
    big = pl.DataFrame({"run_id": [f"r{i}" for i in range(40)], "source_id": [f"a{i // 2}" for i in range(40)],
                        "dataset": ["d"] * 40, "split": ["test"] * 40, "factual": y,
                        "a": y + rng.normal(0, 1, 40), "b": [None if i % 4 == 0 else float(v) for i, v in
                                                            enumerate(y + rng.normal(0, 2, 40))]}, strict=False)
    table = summary_auroc(big, ["a", "b"], human="factual", by=(), n_boot=50)
    both = big.drop_nulls(["a", "b"])
    assert table.get_column("n").to_list() == [30, 30]
    for row in table.iter_rows(named=True):
        assert row["estimate"] == pytest.approx(roc_auc_score(both["factual"] == 1, both[row["score"]]), abs=1e-12)


def test_a_lower_is_better_metric_is_negated_so_higher_is_better_everywhere(own_import: Path) -> None:
    """The header declares each metric's direction (issue 59); the analyses read every score as higher-is-better.
    With 'entail' declared lower-is-better here, its AUROC against the same labels becomes one minus the raw one
    (sklearn on the raw scores), and 'rouge' (higher) is untouched."""
    from sklearn.metrics import roc_auc_score

    from workbench.analyses import oriented

    variables = pl.read_parquet(own_import / "variables.parquet").with_columns(
        pl.when(pl.col("name") == "entail").then(pl.lit("lower")).otherwise(pl.col("direction")).alias("direction"))
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 30)
    frame = pl.DataFrame({"rouge": rng.normal(size=30), "entail": y + rng.normal(size=30)})
    turned, lower = oriented(frame, variables, ["rouge", "entail"])
    assert lower == ["entail"] and turned["rouge"].equals(frame["rouge"])
    assert roc_auc_score(y, turned["entail"]) == pytest.approx(1 - roc_auc_score(y, frame["entail"]), abs=1e-12)


def test_correlation_intervals_are_paired_by_default() -> None:
    """The intervals of the judges-placed table and the forest put every score on the same summaries: 60 summaries
    by 3 systems, 'b' missing on every fifth, so both scores use the 48 that have both; each estimate is the
    Pearson correlation of the residuals from each system's mean (FRANK's protocol, by hand with numpy)."""
    from workbench.analyses import correlation_intervals

    rng = np.random.default_rng(11)
    n = 60
    system = np.array(["s1", "s2", "s3"])[np.arange(n) % 3]
    human = rng.normal(size=n)
    frame = pl.DataFrame({"run_id": [f"r{i}" for i in range(n)], "source_id": [f"a{i // 3}" for i in range(n)],
                          "system": system, "dataset": ["d"] * n, "split": ["test"] * n, "human_score": human,
                          "a": human + rng.normal(size=n),
                          "b": [None if i % 5 == 0 else float(v) for i, v in enumerate(human + rng.normal(0, 2, n))]},
                         strict=False)
    paired = correlation_intervals(frame, ["a", "b"], split="test", correlations=("pearson",), n_boot=50)
    assert paired.get_column("n").to_list() == [48, 48] and paired.get_column("n_missing").to_list() == [12, 12]
    rows = frame.drop_nulls("b")

    def residuals(col: str) -> np.ndarray:
        values = rows[col].to_numpy()
        means = {s: values[rows["system"].to_numpy() == s].mean() for s in ("s1", "s2", "s3")}
        return values - np.array([means[s] for s in rows["system"].to_list()])

    for row in paired.iter_rows(named=True):
        by_hand = np.corrcoef(residuals(row["metric"]), residuals("human_score"))[0, 1]
        assert row["estimate"] == pytest.approx(by_hand, abs=1e-12)
    own = correlation_intervals(frame, ["a", "b"], split="test", correlations=("pearson",), n_boot=50, paired=False)
    assert own.get_column("n").to_list() == [60, 48]
