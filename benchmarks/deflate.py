"""CPU time and size of deflating each record of gzip WARC or WET files: zlib beside ISA-L.

    python benchmarks/deflate.py OUT/dragnet.warc.gz OUT/dragnet.warc.wet.gz [--repeat 5]

Reads the records back out of files written one gzip member per record (the outputs of
``warcdeboil clean``), then deflates each again as its own member at each level and prints the
best CPU time of ``--repeat`` passes and the total compressed size.
"""

from __future__ import annotations

import argparse
import time
import types
import zlib
from pathlib import Path

from isal import isal_zlib

LEVELS: list[tuple[str, types.ModuleType, int]] = [
    ("zlib", zlib, 4), ("zlib", zlib, 6),
    *(("ISA-L", isal_zlib, level) for level in range(4)),
]


def members(path: Path) -> list[bytes]:
    """The decompressed gzip members of ``path``, in order."""
    rest, out = path.read_bytes(), []
    while rest:
        inflater = zlib.decompressobj(31)
        out.append(inflater.decompress(rest))
        rest = inflater.unused_data
    return out


def deflate_all(records: list[bytes], lib: types.ModuleType, level: int) -> int:
    """Deflate each record as its own gzip member; the total size."""
    size = 0
    for record in records:
        deflater = lib.compressobj(level, lib.DEFLATED, 31)
        size += len(deflater.compress(record)) + len(deflater.flush())
    return size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for path in args.files:
        records = members(path)
        print(f"{path.name}: {len(records)} records, {sum(map(len, records)) / 1e6:.1f} MB")
        for name, lib, level in LEVELS:
            best = float("inf")
            for _ in range(args.repeat):
                start = time.process_time()
                size = deflate_all(records, lib, level)
                best = min(best, time.process_time() - start)
            print(f"  {name} {level}: {best:.3f} CPU-s, {size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
