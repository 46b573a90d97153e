"""Make the project's compact copy of Who&When (data/benchmarks/who-and-when/) from the release's own files.

Run from the project root:
``.venv/bin/python tools/compact_who_and_when.py [../shared/data/failure-attribution/who-and-when]``.

Kept: every log of ``Who&When/Algorithm-Generated/`` and ``Who&When/Hand-Crafted/`` as one line of
``SUBSET.jsonl.gz`` (files in number order), the release's JSON object unchanged (its keys in their order, reference
answers included) with the file's name added as ``file``; ``LICENSE`` as it is. The gzip streams are written with
mtime 0, so the copy is the same bytes each time it is made; the README gives each file's SHA-256.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import sys
from pathlib import Path

SOURCE = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/failure-attribution/who-and-when")
OUT = Path("data/benchmarks/who-and-when")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for subset in ("Algorithm-Generated", "Hand-Crafted"):
        files = sorted((SOURCE / "Who&When" / subset).glob("*.json"), key=lambda p: int(p.stem))
        lines = []
        for file in files:
            record = json.loads(file.read_text(encoding="utf-8"))
            lines.append(json.dumps({"file": file.name, **record}, ensure_ascii=False))
        buffer = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as fh:
            fh.write(("\n".join(lines) + "\n").encode("utf-8"))
        (OUT / f"{subset}.jsonl.gz").write_bytes(buffer.getvalue())
        print(f"{subset}: {len(files)} logs, {len(buffer.getvalue()):,} bytes, sha256 "
              f"{hashlib.sha256(buffer.getvalue()).hexdigest()}")
    shutil.copyfile(SOURCE / "LICENSE", OUT / "LICENSE")


if __name__ == "__main__":
    main()
