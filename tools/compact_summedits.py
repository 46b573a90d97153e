"""The project's compact copy of SummEdits (``data/benchmarks/summedits/``): each ``summedits_<domain>.json`` of
the shared copy gzip-compressed byte for byte (no name or time in the gzip header, so the copy is the same on
every run), with the licence, the README and the authors' zero-shot prompt copied unchanged.

    .venv/bin/python tools/compact_summedits.py ../shared/data/human-labels/summedits
"""

from __future__ import annotations

import argparse
import gzip
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "benchmarks" / "summedits"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="the directory of summedits_<domain>.json files")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for file in sorted(args.source.glob("summedits_*.json")):
        with (args.out / f"{file.name}.gz").open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                                                               compresslevel=9, mtime=0) as gz:
            gz.write(file.read_bytes())
    for name in ("LICENSE.txt", "README.md", "standard_zs_prompt.txt"):
        shutil.copyfile(args.source / name, args.out / name)
    total = sum(f.stat().st_size for f in args.out.iterdir())
    print(f"{args.out}: {len(list(args.out.glob('*.gz')))} domains, {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
