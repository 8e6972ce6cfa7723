"""The documented signature scheme: HMAC of the raw body (or query string) with a shared secret."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from surveykit.callbacks import Receiver, callback_signature
from surveykit.callbacks._verify import SignatureCheck


def test_signature_is_hex_hmac_sha256_of_the_raw_bytes() -> None:
    body = b'{"Type":"Receipt","MessageID":"MS1"}'
    expected = hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    assert callback_signature(body, "s3cret") == f"sha256={expected}"
    assert callback_signature(body, b"s3cret", digest="SHA-512").startswith("sha512=")


@pytest.mark.parametrize(
    ("header", "problem"),
    [
        pytest.param(None, "missing", id="missing"),
        pytest.param("sha256=abc", "does not match", id="short"),
        pytest.param("sha1=" + "0" * 40, "must look like", id="other-digest"),
        pytest.param("sha256", "must look like", id="no-value"),
    ],
)
def test_problems_are_named(header: str | None, problem: str) -> None:
    check = SignatureCheck.build("s3cret")
    assert problem in (check.problem(header, b"{}") or "")


def test_a_good_signature_passes_in_any_case() -> None:
    check = SignatureCheck.build("s3cret", header="X-Sig", digest="sha512")
    good = callback_signature(b"{}", "s3cret", digest="sha512")
    assert check.problem(good, b"{}") is None
    assert check.problem(good.upper().replace("SHA512=", "sha512="), b"{}") is None
    assert check.problem(good, b"{ }") is not None


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        pytest.param({"secret": ""}, "empty secret", id="empty"),
        pytest.param({"secret": "x", "signature_digest": "md5"}, "not supported", id="md5"),
        pytest.param({"secret": "x", "signature_header": "Bad Header"}, "header", id="header"),
    ],
)
def test_unsafe_settings_are_refused(kwargs: dict[str, str], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        Receiver(**kwargs)  # type: ignore[arg-type]
