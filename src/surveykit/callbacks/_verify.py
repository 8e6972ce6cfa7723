"""Shared-secret signatures on incoming callbacks.

The platform's own HMAC scheme is not shown in the reference, so surveykit checks a
documented one (see ``docs/callbacks.md``): the sender puts

    X-Surveykit-Signature: sha256=<hex HMAC-SHA256 of the raw body, keyed with the secret>

on the request. For a GET callback the signed bytes are the raw query string (what follows
``?``, exactly as sent). The header name and the digest are configurable. The scheme itself
(:func:`callback_signature`) lives in ``surveykit._signing``, which the sandbox signs with.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field

from surveykit._signing import (
    DEFAULT_SIGNATURE_DIGEST,
    DEFAULT_SIGNATURE_HEADER,
    callback_signature,
    digest_name,
    signing_key,
)

__all__ = [
    "DEFAULT_SIGNATURE_DIGEST",
    "DEFAULT_SIGNATURE_HEADER",
    "SignatureCheck",
    "callback_signature",
]


@dataclass(frozen=True)
class SignatureCheck:
    """How a :class:`~surveykit.callbacks.Receiver` verifies callbacks with a shared secret.

    The secret is kept out of the repr.
    """

    secret: bytes = field(repr=False)
    header: str = DEFAULT_SIGNATURE_HEADER
    digest: str = DEFAULT_SIGNATURE_DIGEST

    @classmethod
    def build(
        cls,
        secret: str | bytes,
        *,
        header: str = DEFAULT_SIGNATURE_HEADER,
        digest: str = DEFAULT_SIGNATURE_DIGEST,
    ) -> SignatureCheck:
        """Validate the settings and build the check."""
        if not header or not header.isascii() or any(c in header for c in " :\r\n"):
            raise ValueError(f"header: {header!r} is not a valid HTTP header name")
        return cls(secret=signing_key(secret), header=header, digest=digest_name(digest))

    def problem(self, value: str | None, data: bytes) -> str | None:
        """Why ``value`` does not sign ``data``, or ``None`` when it does."""
        if value is None:
            return f"the {self.header} header is missing; this receiver requires signed callbacks"
        prefix, sep, given = value.strip().partition("=")
        if not sep or prefix.lower().replace("-", "") != self.digest:
            return f"the {self.header} header must look like '{self.digest}=<hex digest>'"
        given_hex = given.strip().lower().encode("ascii", "replace")
        mac = hmac.new(self.secret, data, self.digest).hexdigest().encode("ascii")
        # Constant time: compare_digest leaks at most the length, which is public anyway.
        if not hmac.compare_digest(given_hex, mac):
            return f"the {self.header} signature does not match the request"
        return None
