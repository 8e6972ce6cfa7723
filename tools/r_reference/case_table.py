"""Print the README's case table (markdown) from tests/analysis/fixtures/r_reference.json.

python tools/r_reference/case_table.py > /tmp/table.md
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ref = json.loads((ROOT / "tests" / "analysis" / "fixtures" / "r_reference.json").read_text())


def fields(case: dict) -> str:
    out = []
    for k, v in case.items():
        if k in ("design", "call", "warnings", "error"):
            continue
        if isinstance(v, list) and v and isinstance(v[0], dict):
            inner = []
            for row in v:
                for kk in row:
                    name = f"{kk}{{ci_low,ci_high,df}}" if kk in ("logit", "beta") else kk
                    if kk == "wilson":
                        name = "wilson{n_eff,ci_low,ci_high}"
                    if name not in inner:
                        inner.append(name)
            out.append(f"{k}[{', '.join(inner)}]")
        elif isinstance(v, dict):
            out.append(f"{k}{{{', '.join(v)}}}")
        else:
            out.append(k)
    return ", ".join(out)


rows: OrderedDict[tuple[str, str], dict] = OrderedDict()
for did, cases in ref["cases"].items():
    for cid, case in cases.items():
        key = (cid, case["call"])
        r = rows.setdefault(key, {"designs": [], "fields": "", "errors": []})
        r["designs"].append(did)
        if "error" in case:
            r["errors"].append(did)
        elif not r["fields"]:
            r["fields"] = fields(case)

print("| case id | R call (`design` = the design) | fields | designs (errors) |")
print("|---|---|---|---|")
for (cid, call), r in rows.items():
    call = re.sub(r"\s+", " ", call).replace("|", "\\|")
    ds = ", ".join(r["designs"])
    if r["errors"]:
        ds += " — **error on:** " + ", ".join(r["errors"])
    print(f"| `{cid}` | `{call}` | {r['fields'] or '(error only)'} | {ds} |")
