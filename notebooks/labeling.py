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
# # Labeling: label a validation sample in JupyterLab
#
# Set who you are (`ANNOTATOR`), the round, the field and the sample below, then run all cells. The widget shows one item at a time, as `annotations/PROTOCOL.md` describes: the entry, its section, the task, the previous summary, every evidence passage in full with its source, the question, and for `correct` the evaluation material. Click a value or type `1`/`2`/`3` in the key box (`u` undo, `s` skip). Every label is saved to `STORE/labels/` at once; running the notebook again (or restarting the kernel) resumes at the first item you have not labeled.
#
# Without a sample file, one is drawn from `DATA` (the testbed by default) as `workbench sample` would. `workbench figures` does not run this notebook: it waits for a person.

# %% tags=["parameters"]
# Parameters (papermill: this cell is tagged "parameters")
ANNOTATOR: str = "alice"                              # letters, digits, _ . - @ + ; no spaces
ROUND: int = 1                                        # 1, then 2 for the second, independent round
FIELD: str = "support"                                # "support" (blind) or "correct" (with evaluation material)
SAMPLE: str = "annotations/samples/testbed.jsonl"     # made by `workbench sample` (drawn here if missing)
STORE: str = "annotations"                            # the annotation store (labels/ and notes/ under it)
DATA: str = "data/testbed"                            # where a missing sample is drawn from
N: int = 300                                          # items in a drawn sample (SJC Appendix G)
SEED: int = 0

# %%
from pathlib import Path

from workbench.annotate import AnnotationStore, label_widget, load_sample
from workbench.annotate.sampling import sample_items
from workbench.datasets import ensure_default_testbed, load_tables
from workbench.atomic import write_jsonl

# relative paths are the project's: JupyterLab starts the kernel in notebooks/, `workbench figures` in the root
ROOT = next((p for p in (Path.cwd(), *Path.cwd().parents) if (p / STORE).is_dir()), Path.cwd())
sample_path = ROOT / SAMPLE
if not sample_path.exists():
    drawn, report = sample_items(load_tables(ensure_default_testbed(ROOT / DATA)), N, ("section", "outcome"), SEED)
    write_jsonl(drawn, sample_path)
    print(f"{sample_path}: {report.message()}")
items = load_sample(sample_path)
print(f"{len(items)} items from {sample_path}; labels go to {ROOT / STORE / 'labels'}")

# %%
labeler = label_widget(items, AnnotationStore(ROOT / STORE), ANNOTATOR, ROUND, FIELD)
labeler
