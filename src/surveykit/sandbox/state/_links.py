"""Short links: POST TinyUrl/Register and RegisterList, and following a link (a Click)."""

from __future__ import annotations

import re
from typing import Any, Final

from surveykit.models import UrlRequest
from surveykit.sandbox.state import _rules
from surveykit.sandbox.state._core import StateCore
from surveykit.sandbox.state._errors import Problem, validation
from surveykit.sandbox.state._messages import Messages
from surveykit.sandbox.state._records import MessageRecord, ShortLink

MAX_LINKS: Final = 1_000
"""The largest RegisterList the sandbox takes in one request (the reference: not shown)."""


class Links:
    """Short links and their clicks (a Click event carries the message that held the link)."""

    def __init__(self, core: StateCore, messages: Messages) -> None:
        self.core = core
        self.messages = messages
        self.clear()

    def clear(self) -> None:
        """No links."""
        self.links: dict[str, ShortLink] = {}

    def restore(self, saved: dict[str, dict[str, dict[str, Any]]]) -> None:
        """Rebuild the links from the store."""
        for value in saved.get("link", {}).values():
            link = ShortLink.from_json(value)
            self.links[link.key] = link

    def register_link(self, request: UrlRequest) -> ShortLink:
        """Make (or reuse) a short link; see ``docs/sandbox.md`` for the rules."""
        domain = request.tiny_domain.strip().lower() if request.tiny_domain else None
        if domain is not None and not _rules.HOSTNAME_RE.fullmatch(domain):
            raise validation({"tinyDomain": [f"{request.tiny_domain!r} is not a domain name"]})
        tag = request.slashtag.strip() if request.slashtag else None
        if tag is not None and (
            not _rules.SLASHTAG_RE.fullmatch(tag) or tag.lower() in _rules.RESERVED_PATHS
        ):
            raise validation(
                {
                    "slashtag": [
                        f"{request.slashtag!r}: 1 to 50 letters, digits, '-' or '_', starting "
                        "with a letter or digit"
                    ]
                }
            )
        with self.core.transaction():
            if tag is not None:
                existing = self.links.get(f"{domain or ''}/{tag}")
                if existing is not None:
                    if existing.full_url == request.full_url:
                        return existing
                    raise Problem(409, f"The slashtag {tag!r} already links to another URL.")
                link = ShortLink(
                    code=tag,
                    full_url=request.full_url,
                    created=self.core.now(),
                    domain=domain,
                    slashtag=tag,
                )
            else:
                if request.reuse:
                    for existing in self.links.values():
                        if existing.domain == domain and existing.full_url == request.full_url:
                            return existing
                while True:
                    code = _rules.short_code(self.core.seed, self.core.next("link"))
                    if f"{domain or ''}/{code}" not in self.links:
                        break
                link = ShortLink(
                    code=code, full_url=request.full_url, created=self.core.now(), domain=domain
                )
            self.links[link.key] = link
            self.core.save("link", link.key, link)
            self.core.save_meta()
            return link

    def find_link(self, host: str | None, code: str) -> ShortLink | None:
        """The link a short URL names: on its custom domain, else on the sandbox's host."""
        with self.core.lock:
            if host:
                link = self.links.get(f"{host.lower()}/{code}")
                if link is not None:
                    return link
            return self.links.get(f"/{code}")

    def click(self, link: ShortLink, short_url: str, by: str | None = None) -> str:
        """Count a click on a short link and record a Click event; return the full URL.

        The event carries the message the link was sent in (its MessageID, respondent as
        Destination, MetaData and Callback settings): the latest message to ``by`` whose
        text holds the link, or, without ``by``, the only message that holds it.
        """
        with self.core.transaction():
            link.clicks += 1
            link.last_click = self.core.now()
            self.core.save("link", link.key, link)
            carrier = self._message_with_link(link, by)
            fields: dict[str, Any] = {"destination": by}
            if carrier is not None:
                fields = {
                    "destination": carrier.destination,
                    "metadata": carrier.metadata,
                    "segments": carrier.segments,
                    "callback": carrier.callback,
                }
            self.core.emit(
                "Click",
                source=short_url,
                message=link.full_url,
                status="Clicked",
                message_id=carrier.message_id if carrier else "Unknown",
                **fields,
            )
            return link.full_url

    def _message_with_link(self, link: ShortLink, by: str | None) -> MessageRecord | None:
        pattern = re.compile(re.escape(f"/{link.code}") + r"(?![A-Za-z0-9_-])")
        found = [
            m
            for m in self.messages.messages.values()
            if pattern.search(m.text)
            and (by is None or m.destination.lower() == by.strip().lower())
        ]
        if by is not None:
            return found[-1] if found else None
        return found[0] if len({m.message_id for m in found}) == 1 else None


__all__ = ["MAX_LINKS", "Links"]
