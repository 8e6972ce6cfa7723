"""Shared-secret signatures on incoming callbacks.

The platform's own HMAC scheme is not shown in the reference, so surveykit checks a
documented one (see ``docs/callbacks.md``): the sender puts

    X-Surveykit-Signature: sha256=<hex HMAC-SHA256 of the raw body, keyed with the secret>

on the request. For a GET callback the signed bytes are the raw query string (what follows
``?``, exactly as sent). The header name and the digest are configurable.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field

DEFAULT_SIGNATURE_HEADER = "X-Surveykit-Signature"
"""The header that carries the signature of a callback."""

DEFAULT_SIGNATURE_DIGEST = "sha256"
"""The hash function of the HMAC, by its :mod:`hashlib` name."""

# Digests a sender can be expected to produce; md5 and friends are refused on purpose.
_DIGESTS = frozenset({"sha1", "sha224", "sha256", "sha384", "sha512", "sha3_256", "sha3_512"})


def _key(secret: str | bytes) -> bytes:
    key = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    if not key:
        raise ValueError("secret: an empty secret would accept anyone; pass a non-empty secret")
    return key


def _check_digest(digest: str) -> str:
    name = digest.lower().replace("-", "")
    if name not in _DIGESTS:
        raise ValueError(f"digest: {digest!r} is not supported; use one of {sorted(_DIGESTS)}")
    return name


def callback_signature(
    data: bytes, secret: str | bytes, *, digest: str = DEFAULT_SIGNATURE_DIGEST
) -> str:
    """The signature header value a sender puts on a callback: ``"<digest>=<hex>"``.

    Args:
        data: the raw request body (POST) or the raw query string (GET), as sent.
        secret: the shared secret (text is UTF-8 encoded).
        digest: the hash function of the HMAC, by its hashlib name.

    Example:
        >>> callback_signature(b'{"Type":"Receipt"}', "s3cret")[:7]
        'sha256='
    """
    name = _check_digest(digest)
    return f"{name}={hmac.new(_key(secret), data, name).hexdigest()}"


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
        return cls(secret=_key(secret), header=header, digest=_check_digest(digest))

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
