"""What a k6 script sends, as JavaScript its default function calls: the cell's declared requests (a workload
file's, LoadSpec.requests, each with its URL, method, headers, body and weight), each chosen by its weight and its
latency sample tagged with its index (`req`), or the cell's URLs as plain GETs of equal weight, untagged. The
requests' names, in index order, are written beside the script (k6.requests.json), so the parser can say which kind each
sample was without a name in a tag (k6's CSV joins tags with '&' and '=', which a name may hold)."""

from __future__ import annotations

import json
from pathlib import Path

from crossbench.loadgen.base import LoadgenError, LoadSpec, raw_path

FILE_SUFFIX = "requests.json"  # k6.requests.json: the declared requests' names in index order

# pick() draws a request by weight; send() sends it; tagged() adds its index to a sample's tags
CODE = """\
const requests = %(requests)s;
const declared = %(declared)s;
const cumulative = [];
let totalWeight = 0;
for (const r of requests) { totalWeight += r.weight; cumulative.push(totalWeight); }
function pick() {
  const x = Math.random() * totalWeight;
  for (let i = 0; i < cumulative.length; i++) { if (x < cumulative[i]) return i; }
  return cumulative.length - 1;
}
function send(i, timeout) {
  const r = requests[i];
  return http.request(r.method, r.url, r.body, { headers: r.headers, timeout: timeout });
}
function tagged(i, tags) {
  if (declared) { tags.req = String(i); }
  return tags;
}
"""


def sent(spec: LoadSpec) -> list[dict]:
    """The requests the script draws from: the declared ones (their URLs are spec.urls, in the same order), or a
    GET of each URL."""
    if spec.requests:
        if len(spec.requests) != len(spec.urls):
            raise LoadgenError(f"k6: {len(spec.requests)} declared requests and {len(spec.urls)} URL(s): one each")
        return [
            {"method": r["method"], "url": url, "body": r["body"], "headers": r["headers"], "weight": r["weight"]}
            for r, url in zip(spec.requests, spec.urls)
        ]
    return [{"method": "GET", "url": url, "body": None, "headers": {}, "weight": 1} for url in spec.urls]


def code(spec: LoadSpec) -> str:
    """The script's requests and its pick(), send() and tagged() (CODE)."""
    return CODE % {"requests": json.dumps(sent(spec)), "declared": "true" if spec.requests else "false"}


def write_names(spec: LoadSpec, out_dir: Path) -> None:
    """k6.requests.json: the declared requests' names in index order (nothing without declared requests)."""
    path = raw_path(out_dir, "k6", FILE_SUFFIX)
    path.unlink(missing_ok=True)
    if spec.requests:
        path.write_text(json.dumps([r["name"] for r in spec.requests]) + "\n")


def names(out_dir: Path) -> list[str] | None:
    """The declared requests' names a run wrote (write_names), or None for a run of plain GETs."""
    path = raw_path(out_dir, "k6", FILE_SUFFIX)
    return json.loads(path.read_text()) if path.exists() else None
