# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Labeling: label a validation sample, or adjudicate its disagreements
#
# Run all cells (the code is folded: click a cell's bar to open it; the first one holds the parameters, listed in the README). Click a value or type `1`/`2`/`3` in the key box (`u` undo, `s` skip); each label is saved at once and a rerun resumes at the first unlabeled item. `MODE = "adjudicate"` decides the disagreements `workbench agree` wrote, in the same view.

# %% tags=["parameters"] jupyter={"source_hidden": true}
# Parameters (papermill: this cell is tagged "parameters")
ANNOTATOR: str = "alice"                  # letters, digits, _ . - @ + ; no spaces (the adjudicator's name in MODE "adjudicate")
ROUND: int = 1                            # 1, then 2 for the second, independent round
FIELD: str = "support"                    # "support" (blind) or "correct" (with evaluation material)
SAMPLE: str = "build/val.jsonl"           # the README tour's sample (`workbench sample ... --out build/val.jsonl`)
STORE: str = "build/annotations"          # the tour's annotation store (labels/ and notes/ under it)
MODE: str = "label"                       # "label", or "adjudicate": decide STORE/adjudication.jsonl's disagreements
DATA: str = "data/testbed"                # where a missing sample is drawn from
N: int = 300                              # items in a drawn sample (SJC Appendix G)
SEED: int = 0

# %% jupyter={"source_hidden": true}
from workbench.annotate import AnnotationStore, label_widget, load_sample
from workbench.annotate import sample_items, write_sample
from workbench.annotate import adjudicate_widget
from workbench.datasets import ensure_default_testbed, load
from workbench.notebooks import use_project_root

# relative paths are the project's: JupyterLab starts the kernel in notebooks/, `workbench figures` in the root
ROOT = use_project_root(chdir=True)
sample_path = ROOT / SAMPLE
if not sample_path.exists():
    drawn, report = sample_items(load(ensure_default_testbed(ROOT / DATA)), N, ("section", "outcome"), SEED)
    write_sample(drawn, sample_path)
    print(f"{sample_path}: {report.message()}")
items = load_sample(sample_path)
if MODE == "adjudicate":
    print(f"{ANNOTATOR} adjudicates {FIELD} in {ROOT / STORE / 'adjudication.jsonl'} (evidence from {SAMPLE})")
    labeler = adjudicate_widget(ROOT / STORE / "adjudication.jsonl", FIELD, adjudicator=ANNOTATOR, items=items)
elif MODE == "label":
    print(f"{ANNOTATOR} labels {FIELD}, round {ROUND}: {len(items)} items from {SAMPLE}, labels to {STORE}/labels")
    store = AnnotationStore(ROOT / STORE)
    store.keep_sample(sample_path)  # `workbench agree` and `adjudicate` find this sample's items from the store
    labeler = label_widget(items, store, ANNOTATOR, ROUND, FIELD)
else:
    raise ValueError(f"MODE: expected 'label' or 'adjudicate', got {MODE!r}")
labeler
