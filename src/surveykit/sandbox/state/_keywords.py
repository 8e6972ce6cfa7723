"""Keywords: POST, PATCH, DELETE and GET Keyword."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from surveykit.sandbox.state import _rules
from surveykit.sandbox.state._core import StateCore
from surveykit.sandbox.state._errors import Problem, validation
from surveykit.sandbox.state._records import KeywordRecord


class Keywords(StateCore):
    """The account's keywords."""

    def create_keyword(self, keyword: KeywordRecord) -> dict[str, Any]:
        """POST Keyword: register a new keyword (a duplicate is refused with 409)."""
        self._check_keyword(keyword.keyword)
        with self.transaction():
            key = keyword.keyword.upper()
            if key in self.keywords:
                raise Problem(
                    409,
                    f"The keyword {keyword.keyword!r} is already registered; "
                    "use PATCH to change it.",
                )
            self.keywords[key] = keyword
            self._save("keyword", key, keyword)
            return keyword.wire()

    def update_keyword(self, name: str, changes: Mapping[str, Any]) -> dict[str, Any]:
        """PATCH Keyword: change the given fields of a registered keyword."""
        with self.transaction():
            keyword = self.keywords.get(name.strip().upper())
            if keyword is None:
                raise Problem(404, f"No keyword {name!r} is registered on the account.")
            for attribute, value in changes.items():
                setattr(keyword, attribute, value)
            keyword.updated = self.now()
            self._save("keyword", keyword.keyword.upper(), keyword)
            return keyword.wire()

    def delete_keyword(self, name: str) -> dict[str, Any]:
        """DELETE Keyword?keyword=...: remove a keyword."""
        with self.transaction():
            keyword = self.keywords.pop(name.strip().upper(), None)
            if keyword is None:
                raise Problem(404, f"No keyword {name!r} is registered on the account.")
            self.store.delete("keyword", keyword.keyword.upper())
            return keyword.wire()

    def list_keywords(self) -> list[dict[str, Any]]:
        """GET Keyword: every keyword of the account, in alphabetical order."""
        with self.lock:
            return [self.keywords[key].wire() for key in sorted(self.keywords)]

    @staticmethod
    def _check_keyword(name: str) -> None:
        if not _rules.KEYWORD_RE.fullmatch(name):
            raise validation(
                {"keyword": [f"{name!r}: a keyword is 1 to 20 letters or digits, with no spaces"]}
            )
        if name.upper() in _rules.RESERVED_KEYWORDS:
            raise validation(
                {"keyword": [f"{name!r} is reserved for the stop list and help messages"]}
            )


__all__ = ["Keywords"]
