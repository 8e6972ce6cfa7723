"""A batch journal's ``error`` column holds no credential, in any form a server echoed it.

A proxy's 502 page quotes each request header plainly, or in base64 (alone and as
``user:value``) and URL-encoded; a batch sent through it against a real server journals
each row's error, and the credentials must not be in the journal, nor in the result.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import surveykit as sk
from tests.helpers.echoing_proxy import EchoingProxy
from tests.helpers.http_servers import serve_asgi
from tests.helpers.secrets import leaks

TOKEN = "tok-Jr52Kw8Lq-journal"
PASSWORD = "pw-Hd71Ns3Xc"
API_KEY = "key-Pz90Bv4Tm"
SECRETS = [TOKEN, PASSWORD, API_KEY]


@pytest.fixture(scope="module")
def proxy() -> Iterator[tuple[str, EchoingProxy]]:
    app = EchoingProxy()
    with serve_asgi(app) as url:
        yield url, app


@pytest.mark.parametrize("mode", ["502", "encoded"])
def test_the_journal_error_column_holds_no_credential(
    proxy: tuple[str, EchoingProxy], tmp_path: Path, mode: str
) -> None:
    url, app = proxy
    app.mode = mode
    journal = tmp_path / "run.journal.sqlite"
    df = pd.DataFrame({"mobileNumber": ["447700900123", "447700900124"]})
    base = url.replace("http://", f"http://apiuser:{PASSWORD}@")
    with sk.Client(base, TOKEN, headers={"X-Api-Key": API_KEY}, max_retries=0) as client:
        result = sk.send_batch(
            client, df, message="Hi", source="447700900999", journal=journal, progress=False
        )
    assert set(result.frame["outcome"]) == {"unknown"}  # a 502 to a send: may have gone
    with sqlite3.connect(journal) as db:
        errors = [row[0] for row in db.execute("SELECT error FROM rows")]
    assert len(errors) == 2
    for error in errors:
        assert "502" in error and "authorization" in error, "the page is still quoted"
        assert "authorization: ***" in error or "authorization: b64=***" in error
        assert not leaks(error, SECRETS)
    assert not leaks(result.frame.to_csv(), SECRETS)
