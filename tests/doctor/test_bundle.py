"""The doctor's bundle: each answer redacted whole, then cut to its first 4 KiB.

Cutting first left the head of a token that straddles the cut unredacted (the whole token
was no longer there to be found).
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest

import surveykit as sk
from surveykit._doctor._bundle import BODY_BYTES
from tests.helpers.http_servers import serve_asgi
from tests.helpers.secrets import leaks

TOKEN = "Zq9xW-tok-4kB-straddler-77"
API_KEY = "key-Mn42RtY7wQe9"


def straddling(offset: int) -> bytes:
    """A body with the token starting ``offset`` bytes before the cut."""
    return b"x" * (BODY_BYTES - offset) + TOKEN.encode() + b"\n" + b"y" * 1000


def answering(body: bytes) -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        headers = [(b"content-type", b"text/plain")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


@pytest.mark.parametrize("offset", [1, 5, len(TOKEN) - 1], ids=["1", "5", "len-1"])
def test_a_token_across_the_cut_leaves_no_characters(tmp_path: Path, offset: int) -> None:
    target = tmp_path / "doctor.zip"
    with (
        serve_asgi(answering(straddling(offset))) as url,
        sk.Client(url, TOKEN, headers={"X-Api-Key": API_KEY}, max_retries=0) as client,
    ):
        sk.doctor(client, survey="S", bundle=target)
    with zipfile.ZipFile(target) as archive:
        files = {Path(n).name: archive.read(n).decode() for n in archive.namelist()}
    answers = {name: text for name, text in files.items() if name[0].isdigit()}
    assert answers, "the bundle holds the answers"
    for name, text in answers.items():
        assert "more bytes]" in text, name  # the answer was cut
        assert TOKEN[:offset] not in text, f"{name} keeps the token's first characters"
        assert not leaks(text, [TOKEN, API_KEY]), name
        assert "x-api-key" not in text.lower(), name
