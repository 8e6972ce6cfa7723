"""Where a secret could hide: the encodings a server or a library may echo it in.

Written independently of surveykit's redaction, so a test using it is an oracle.
"""

from __future__ import annotations

import base64
import pickle
import traceback
from collections.abc import Iterable
from urllib.parse import quote


def forms(secret: str) -> dict[str, str]:
    """``secret`` as a page may show it: plain, base64 (alone and after a user), URL-encoded."""
    raw = secret.encode()
    return {
        "plain": secret,
        "base64": base64.b64encode(raw).decode(),
        "urlsafe base64": base64.urlsafe_b64encode(raw).decode(),
        "base64 of user:secret": base64.b64encode(b"debug-user:" + raw).decode(),
        "urlsafe base64 of user:secret": base64.urlsafe_b64encode(b"debug-user:" + raw).decode(),
        "URL-encoded": quote(secret, safe=""),
    }


def leaks(text: str | bytes, secrets: Iterable[str]) -> list[str]:
    """The forms of ``secrets`` found in ``text`` (empty when it holds none)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return [
        f"{kind} of {secret[:4]}..."
        for secret in secrets
        for kind, form in forms(secret).items()
        if form in text
    ]


def error_texts(error: BaseException) -> dict[str, str | bytes]:
    """Everything an error shows or carries, before and after a pickle round trip."""
    texts: dict[str, str | bytes] = {
        "str": str(error),
        "repr": repr(error),
        "traceback": "".join(traceback.format_exception(error)),
        "pickle": pickle.dumps(error),
    }
    travelled = pickle.loads(pickle.dumps(error))
    texts["str after unpickling"] = str(travelled)
    for name, value in vars(travelled).items():
        texts[f"unpickled .{name}"] = repr(value)
    for owner in (error, travelled):
        request = getattr(owner, "request", None)
        if request is not None:
            texts["request headers"] = repr(request.headers.multi_items())
            texts["request url"] = str(request.url)
        response = getattr(owner, "response", None)
        if response is not None:
            texts["response headers"] = repr(response.headers.multi_items())
            texts["response content"] = response.content
    return texts


def assert_no_secret(error: BaseException, secrets: Iterable[str]) -> None:
    """Fail naming where an error shows a secret, in any of its forms."""
    secrets = list(secrets)
    for where, text in error_texts(error).items():
        found = leaks(text, secrets)
        assert not found, f"{', '.join(found)} in the error's {where}"
