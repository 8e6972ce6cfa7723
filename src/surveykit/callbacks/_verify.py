"""Shared-secret signatures on incoming callbacks.

The platform's own HMAC scheme is not shown in the reference, so surveykit checks a
documented one (see ``docs/callbacks.md``): the sender puts

    X-Surveykit-Signature: sha256=<hex HMAC-SHA256 of the raw body, keyed with the secret>

on the request. For a GET callback the signed bytes are the raw query string (what follows
``?``, exactly as sent). A signature may carry its sending time (``t=<unix seconds>,``
before the digest, the HMAC then covering ``b"<t>." + data``): such a callback is refused
when its time is further than ``replay_window`` seconds from the receiver's clock, so a
captured callback cannot be replayed later. The header name and the digest are
configurable. The scheme itself
(:func:`callback_signature`) lives in ``surveykit.rules.signing``, which the sandbox signs with.
"""

from __future__ import annotations

import hmac
import time
from dataclasses import dataclass, field
from typing import Final

from surveykit.rules.signing import (
    DEFAULT_SIGNATURE_DIGEST,
    DEFAULT_SIGNATURE_HEADER,
    callback_signature,
    digest_name,
    signing_key,
    timestamped,
)

DEFAULT_REPLAY_WINDOW: Final = 300.0
"""Seconds a timestamped signature stays valid either side of the receiver's clock."""

__all__ = [
    "DEFAULT_REPLAY_WINDOW",
    "DEFAULT_SIGNATURE_DIGEST",
    "DEFAULT_SIGNATURE_HEADER",
    "SignatureCheck",
    "callback_signature",
]


@dataclass(frozen=True)
class SignatureCheck:
    """How a :class:`~surveykit.callbacks.Receiver` verifies callbacks with a shared secret.

    The secret is kept out of the repr. ``replay_window`` (seconds, None for no limit)
    bounds how far a timestamped signature's time may be from now; ``require_timestamp``
    refuses signatures without one.
    """

    secret: bytes = field(repr=False)
    header: str = DEFAULT_SIGNATURE_HEADER
    digest: str = DEFAULT_SIGNATURE_DIGEST
    replay_window: float | None = DEFAULT_REPLAY_WINDOW
    require_timestamp: bool = False

    @classmethod
    def build(
        cls,
        secret: str | bytes,
        *,
        header: str = DEFAULT_SIGNATURE_HEADER,
        digest: str = DEFAULT_SIGNATURE_DIGEST,
        replay_window: float | None = DEFAULT_REPLAY_WINDOW,
        require_timestamp: bool = False,
    ) -> SignatureCheck:
        """Validate the settings and build the check."""
        if not header or not header.isascii() or any(c in header for c in " :\r\n"):
            raise ValueError(f"header: {header!r} is not a valid HTTP header name")
        if replay_window is not None and not replay_window > 0:
            raise ValueError(f"replay_window: expected seconds > 0 or None, got {replay_window!r}")
        return cls(
            secret=signing_key(secret),
            header=header,
            digest=digest_name(digest),
            replay_window=replay_window,
            require_timestamp=require_timestamp,
        )

    def problem(self, value: str | None, data: bytes, now: float | None = None) -> str | None:
        """Why ``value`` does not sign ``data``, or ``None`` when it does.

        ``now`` (unix seconds, default the current time) is what a timestamp is compared
        with.
        """
        if value is None:
            return f"the {self.header} header is missing; this receiver requires signed callbacks"
        shape = f"the {self.header} header must look like '[t=<unix seconds>,]{self.digest}=<hex>'"
        parts = [part.strip() for part in value.strip().split(",")]
        stamp: int | None = None
        if len(parts) == 2:
            name, sep, seconds = parts[0].partition("=")
            if name.strip().lower() != "t" or not sep or not seconds.strip().isdigit():
                return shape
            stamp = int(seconds.strip())
        elif len(parts) != 1:
            return shape
        prefix, sep, given = parts[-1].partition("=")
        if not sep or prefix.lower().replace("-", "") != self.digest:
            return shape
        if stamp is None and self.require_timestamp:
            return f"the {self.header} signature has no timestamp (t=); this receiver requires one"
        signed = data if stamp is None else timestamped(data, stamp)
        given_hex = given.strip().lower().encode("ascii", "replace")
        mac = hmac.new(self.secret, signed, self.digest).hexdigest().encode("ascii")
        # Constant time: compare_digest leaks at most the length, which is public anyway.
        if not hmac.compare_digest(given_hex, mac):
            return f"the {self.header} signature does not match the request"
        if stamp is not None and self.replay_window is not None:
            age = (time.time() if now is None else now) - stamp
            if abs(age) > self.replay_window:
                when = f"{age:.0f} s ago" if age > 0 else f"{-age:.0f} s in the future"
                return (
                    f"the {self.header} signature was made {when}, outside this receiver's "
                    f"replay window of {self.replay_window:g} s (a replayed or delayed "
                    "callback, or clocks apart)"
                )
        return None
