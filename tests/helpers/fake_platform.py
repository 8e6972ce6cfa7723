"""A small stateful fake of the platform at the httpx transport, for batch tests.

It keeps every message it accepted, so tests can check that nothing was sent twice, and
answers per destination from a script: an exception to raise, or a status and body.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

LANDLINE = {
    "MessageID": "Unknown",
    "Status": "Reachable",
    "Reachable": True,
    "NumberType": "Landline",
}
BLOCKED = {"MessageID": "Unknown", "Status": "Blocked", "Reachable": False}


@dataclass
class FakePlatform:
    """Answers /v3.2 routes used by batches; thread-safe."""

    script: dict[str, list[Any]] = field(default_factory=dict)
    accepted: list[dict[str, Any]] = field(default_factory=list)
    requests: list[tuple[str, str, Any]] = field(default_factory=list)
    links_registered: int = 0
    references: set[str] = field(default_factory=lambda: {"CSAT-2026"})
    imported: list[dict[str, Any]] = field(default_factory=list)
    import_script: list[Any] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _next: int = 1000

    def fail(self, destination: str, *answers: Any) -> None:
        """Answer the next requests to ``destination`` with these, in order."""
        self.script.setdefault(destination, []).extend(answers)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        with self._lock:
            self.requests.append((request.method, request.url.path, body))
            path = request.url.path
            if path == "/v3.2/TinyUrl/RegisterList":
                links = []
                for _ in body["urls"]:
                    self.links_registered += 1
                    links.append(f"https://t.example/{self.links_registered}")
                return httpx.Response(200, json=links)
            if path == "/v3.2/Data/Import":
                answer = self.import_script.pop(0) if self.import_script else None
                if answer is None and body["reference"] not in self.references:
                    answer = (
                        404,
                        {
                            "type": "about:blank",
                            "title": "Not Found",
                            "status": 404,
                            "detail": f"no import definition {body['reference']}",
                        },
                    )
                if answer is None:
                    results = []
                    for record in body["list"]:
                        self.imported.append(record)
                        ok = "mobileNumber" in record or "emailAddress" in record
                        results.append(
                            {
                                "status": "Success" if ok else "Error",
                                "message": "" if ok else "no contact",
                                "firstName": record.get("firstName"),
                                "when": "2026-03-02T09:00:00Z",
                            }
                        )
                    return httpx.Response(200, json=results)
                if isinstance(answer, BaseException):
                    raise answer
                return httpx.Response(answer[0], json=answer[1])
            if path.startswith("/v3.2/Message/Lookup/"):
                number = path.rsplit("/", 1)[1]
                kind = "Landline" if number.endswith("0") else "Mobile"
                return httpx.Response(
                    200,
                    json={
                        "messageID": f"LK{number}",
                        "status": "Success",
                        "carrier": "FakeTel",
                        "reachable": not number.endswith("9"),
                        "numberType": kind,
                    },
                )
            destination = body.get("destination") or body.get("To")
            pending = self.script.get(destination)
            answer = pending.pop(0) if pending else None
        if isinstance(answer, BaseException):
            raise answer
        if isinstance(answer, tuple):
            status, payload, *headers = answer
            return httpx.Response(status, json=payload, headers=headers[0] if headers else None)
        with self._lock:
            self._next += 1
            message_id = f"MS{self._next}"
            self.accepted.append({"id": message_id, **body})
        return httpx.Response(
            200,
            json={
                "MessageID": message_id,
                "Status": "Sent",
                "Carrier": "FakeTel",
                "Reachable": True,
                "NumberType": "Mobile",
            },
        )

    def sends_per_destination(self) -> Counter[str]:
        return Counter(m.get("destination") or m.get("To") for m in self.accepted)
