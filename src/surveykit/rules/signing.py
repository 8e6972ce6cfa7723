"""The callback signature scheme, shared by the side that signs and the side that verifies.

The platform's own HMAC scheme is not shown in the reference, so surveykit uses a documented
one (see ``docs/callbacks.md``): the sender puts

    X-Surveykit-Signature: sha256=<hex HMAC-SHA256 of the raw body, keyed with the secret>

on the request. For a GET callback the signed bytes are the raw query string (what follows
``?``, exactly as sent). A sender may also sign the time it sends at, which lets the
receiver refuse a replay outside a time window:

    X-Surveykit-Signature: t=<unix seconds>,sha256=<hex HMAC of b"<unix seconds>." + data>

It lives below both the sandbox (which signs) and
``surveykit.callbacks`` (which verifies, and re-exports :func:`callback_signature`), so
neither imports the other.
"""

from __future__ import annotations

import hmac
from datetime import datetime
from typing import Final

DEFAULT_SIGNATURE_HEADER: Final = "X-Surveykit-Signature"
"""The header that carries the signature of a callback."""

DEFAULT_SIGNATURE_DIGEST: Final = "sha256"
"""The hash function of the HMAC, by its :mod:`hashlib` name."""

# Digests a sender can be expected to produce; md5 and friends are refused on purpose.
DIGESTS: Final = frozenset({"sha1", "sha224", "sha256", "sha384", "sha512", "sha3_256", "sha3_512"})


def signing_key(secret: str | bytes) -> bytes:
    """The HMAC key of a secret (text is UTF-8 encoded); an empty secret is a ValueError."""
    key = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    if not key:
        raise ValueError("secret: an empty secret would accept anyone; pass a non-empty secret")
    return key


def digest_name(digest: str) -> str:
    """The hashlib name of a supported digest (``SHA-256`` -> ``sha256``); else ValueError."""
    name = digest.lower().replace("-", "")
    if name not in DIGESTS:
        raise ValueError(f"digest: {digest!r} is not supported; use one of {sorted(DIGESTS)}")
    return name


def timestamped(data: bytes, timestamp: int) -> bytes:
    """The bytes a timestamped signature covers: ``b"<unix seconds>." + data``."""
    return f"{timestamp}.".encode("ascii") + data


def callback_signature(
    data: bytes,
    secret: str | bytes,
    *,
    digest: str = DEFAULT_SIGNATURE_DIGEST,
    timestamp: float | datetime | None = None,
) -> str:
    """The signature header value a sender puts on a callback: ``"<digest>=<hex>"``.

    Args:
        data: the raw request body (POST) or the raw query string (GET), as sent.
        secret: the shared secret (text is UTF-8 encoded).
        digest: the hash function of the HMAC, by its hashlib name.
        timestamp: the sending time (unix seconds or an aware datetime): the value is then
            ``"t=<unix seconds>,<digest>=<hex>"``, the HMAC covering ``b"<t>." + data``,
            so a receiver can refuse the callback when it is replayed later.

    Example:
        >>> callback_signature(b'{"Type":"Receipt"}', "s3cret")[:7]
        'sha256='
        >>> callback_signature(b'{"Type":"Receipt"}', "s3cret", timestamp=1700000000)[:20]
        't=1700000000,sha256='
    """
    name = digest_name(digest)
    key = signing_key(secret)
    if timestamp is None:
        return f"{name}={hmac.new(key, data, name).hexdigest()}"
    seconds = int(timestamp.timestamp() if isinstance(timestamp, datetime) else timestamp)
    mac = hmac.new(key, timestamped(data, seconds), name).hexdigest()
    return f"t={seconds},{name}={mac}"
