"""Check that every double R computed reads back bit for bit from r_reference.json.

reference.R, run with R_REFERENCE_HEX=<file>, lists each finite double as
"<json path>\\t...\\t<C99 hex>"; this compares Python's float() of the JSON
value with float.fromhex of R's exact value.

python tools/r_reference/check_json.py <hex file>
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main(hex_file: str) -> int:
    ref = json.loads((ROOT / "tests" / "analysis" / "fixtures" / "r_reference.json").read_text())
    n = bad = 0
    for line in Path(hex_file).read_text().splitlines():
        *path, h = line.split("\t")
        node = ref
        for key in path:
            node = node[int(key)] if isinstance(node, list) else node[key]
        n += 1
        if float(node) != float.fromhex(h):
            bad += 1
            print("mismatch:", "/".join(path), node, h)
    print(f"{n} doubles checked, {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
