"""Which credentials :class:`Secrets` recognises, in which forms, and what it leaves."""

from __future__ import annotations

import base64
import logging

import httpx
import pytest

import surveykit as sk
from surveykit.client._redact import Secrets, header_secrets, is_credential_header
from tests.helpers.secrets import forms, leaks

TOKEN = "tok-Qw3rTy8-Ui0pAs"


@pytest.mark.parametrize("kind", list(forms(TOKEN)))
def test_every_form_is_replaced(kind: str) -> None:
    text = f"before {forms(TOKEN)[kind]} after"
    clean = Secrets([TOKEN]).redact(text)
    assert clean.startswith("before ") and clean.endswith(" after") and "***" in clean
    assert not leaks(clean, [TOKEN])


def test_quoted_forms_are_replaced() -> None:
    secret = 'pa"ss/wo rd&<x>'
    texts = [
        '{"p": "pa\\"ss/wo rd&<x>"}',
        "pa%22ss%2Fwo%20rd%26%3Cx%3E",
        "pa%22ss%2Fwo+rd%26%3Cx%3E",
        "pa&quot;ss/wo rd&amp;&lt;x&gt;",
    ]
    for text in texts:
        assert "wo" not in Secrets([secret]).redact(text), text


@pytest.mark.parametrize("before", ["", "a", "ab", "abc", "someone:"])
def test_a_secret_inside_a_longer_base64_text_leaves_none_of_its_bytes(before: str) -> None:
    blob = base64.b64encode(f"{before}{TOKEN}!after".encode()).decode()
    clean = Secrets([TOKEN]).redact(f"x {blob} y")
    assert "***" in clean
    for piece in clean[2:-2].split("***"):  # what is left decodes to no part of the token
        assert not any(TOKEN[i : i + 3].encode() in _decode(piece) for i in range(len(TOKEN) - 2))


def _decode(piece: str) -> bytes:
    for pad in range(4):
        for offset in range(4):
            try:
                return base64.b64decode("A" * offset + piece + "=" * pad, validate=True)
            except ValueError:
                continue
    return b""


def test_the_basic_pair_of_a_known_user() -> None:
    pair = base64.b64encode(f"apiuser:{TOKEN}".encode()).decode()
    assert Secrets([TOKEN], ["apiuser"]).redact(f"Basic {pair}") == "Basic ***"


def test_short_values_are_not_searched_for_and_the_repr_shows_none() -> None:
    secrets = Secrets(["abc", None, "", TOKEN])
    assert secrets.redact("abc") == "abc"
    assert TOKEN not in repr(secrets) and repr(secrets) == "<Secrets: 1 hidden>"
    assert not Secrets(["abc"])


@pytest.mark.parametrize(
    ("name", "secret"),
    [("Authorization", True), ("Proxy-Authorization", True), ("Cookie", True),
     ("X-Api-Key", True), ("X-Upstream-Token", True), ("X-Client-Secret", True),
     ("X-Session-Id", True), ("Accept", False), ("User-Agent", False),
     ("Idempotency-Key", False), ("Content-Type", False)],
)
def test_credential_headers_are_known_by_name(name: str, secret: bool) -> None:
    assert is_credential_header(name) is secret


def test_header_secrets_take_the_credential_part_and_each_cookie() -> None:
    found = header_secrets(
        [("Authorization", "Bearer abcdef123"), ("Cookie", "a=first-value; b=second-value"),
         ("Accept", "application/json")]
    )
    assert {"Bearer abcdef123", "abcdef123", "first-value", "second-value"} <= set(found)
    assert "application/json" not in found


def test_a_logged_traceback_is_scrubbed_while_a_client_is_open(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    with sk.Client("https://api.example.test", TOKEN, transport=httpx.MockTransport(print)):
        try:
            raise RuntimeError(f"echo: Basic {TOKEN}")
        except RuntimeError:
            logging.getLogger("httpx").debug("failed with %s", TOKEN, exc_info=True)
    assert "failed with ***" in caplog.text and "RuntimeError: echo: Basic ***" in caplog.text
    assert not leaks(caplog.text, [TOKEN])

