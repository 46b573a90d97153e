"""Make the project's compact copy of FRANK (data/benchmarks/frank/) from FRANK's own files.

Run from the project root: ``.venv/bin/python tools/compact_frank.py [../shared/data/human-labels/frank]``.

Kept, nothing else of FRANK's: ``human_annotations.json`` and ``baseline_factuality_metrics_outputs.json``
gzip-compressed byte for byte (``gzip -dc`` gives the files back, their SHA-256 in the README), ``LICENSE`` as it is,
and ``articles.jsonl.gz``: one line per article file of ``articles-wbertscore-json/`` (in file-name order) with
its ``hash``, its ``article_lines`` and, for each system that has a summary in the human annotations, the summary
(``MODEL``) and its sentences (``MODEL_lines``); the BERTScore fields, the reference summaries, the URL and the
rest are left out. Every gzip stream is written with mtime 0, so the copy is the same bytes each time it is made.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import sys
from pathlib import Path

SOURCE = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/human-labels/frank")
OUT = Path("data/benchmarks/frank")


def gz(data: bytes, path: Path) -> None:
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as fh:
        fh.write(data)
    path.write_bytes(buffer.getvalue())


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    digests = {}
    for name in ("human_annotations.json", "baseline_factuality_metrics_outputs.json"):
        data = (SOURCE / name).read_bytes()
        digests[name] = hashlib.sha256(data).hexdigest()
        gz(data, OUT / f"{name}.gz")
    annotated: dict[str, set[str]] = {}
    for record in json.loads((SOURCE / "human_annotations.json").read_text(encoding="utf-8")):
        annotated.setdefault(record["hash"], set()).add(record["model_name"])
    lines = []
    for file in sorted((SOURCE / "articles-wbertscore-json").glob("*.json")):
        article = json.loads(file.read_text(encoding="utf-8"))
        kept = {"hash": article["hash"], "article_lines": article["article_lines"]}
        for model in sorted(annotated.get(article["hash"], ())):
            kept[model] = article[model]
            kept[f"{model}_lines"] = article[f"{model}_lines"]
        lines.append(json.dumps(kept, ensure_ascii=False, sort_keys=False))
    gz(("\n".join(lines) + "\n").encode("utf-8"), OUT / "articles.jsonl.gz")
    shutil.copyfile(SOURCE / "LICENSE", OUT / "LICENSE")
    for name, digest in digests.items():
        print(f"{name}: sha256 {digest}")
    print(f"{len(lines)} articles -> {OUT / 'articles.jsonl.gz'}")


if __name__ == "__main__":
    main()
