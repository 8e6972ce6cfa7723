"""Callback settings: the reference's Callback parameters as delivery settings.

Used for the account callback (``Sandbox.set_account_callback``, ``POST /_sandbox/callback``,
``--callback-url``) and for an email's own ``Callback`` block.
"""

from __future__ import annotations

from surveykit.models import CallbackSettings
from surveykit.rules.signing import signing_key
from surveykit.sandbox.state._records import CALLBACK_ACTIONS, CallbackTarget


def callback_target(
    settings: CallbackSettings, *, strict: bool = True, secret: str | None = None
) -> CallbackTarget:
    """Delivery settings from the reference's Callback parameters, defaults filled in.

    Action keywords are matched in any letter case; an unknown one is a ``ValueError``
    when ``strict`` (account settings) and ignored otherwise (an email's Callback block).
    ``secret`` (account settings only) signs the requests; it must be a non-empty string.
    """
    if secret is not None:
        if not isinstance(secret, str):
            raise ValueError(f"Secret: expected a string, got {type(secret).__name__}")
        signing_key(secret)  # the receiver's own check: an empty secret is refused
    urls = [settings.url] if isinstance(settings.url, str) else list(settings.url)
    actions: list[str] = []
    known = {name.lower(): name for name in CALLBACK_ACTIONS}
    for word in (settings.action or "").split(","):
        if not word.strip():
            continue
        name = known.get(word.strip().lower())
        if name is None:
            if strict:
                raise ValueError(
                    f"Action: {word.strip()!r} is not one of {', '.join(CALLBACK_ACTIONS)}"
                )
            continue
        if name not in actions:
            actions.append(name)
    defaults = CallbackTarget(urls=urls)
    return CallbackTarget(
        urls=urls,
        method=str(settings.method.value) if settings.method else "POST",
        retries=settings.retries if settings.retries is not None else defaults.retries,
        timeout_ms=settings.timeout or defaults.timeout_ms,
        total_timeout_ms=settings.total_timeout or defaults.total_timeout_ms,
        actions=actions,
        secret=secret,
    )


__all__ = ["callback_target"]
