"""Keywords: POST, PATCH, DELETE and GET Keyword."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from surveykit.sandbox.data._seed import SampleData
from surveykit.sandbox.state import _rules
from surveykit.sandbox.state._core import StateCore
from surveykit.sandbox.state._errors import Problem, validation
from surveykit.sandbox.state._records import KeywordRecord


class Keywords:
    """The account's keywords (stored upper case)."""

    def __init__(self, core: StateCore) -> None:
        self.core = core
        self.clear()

    def clear(self) -> None:
        """No keywords."""
        self.keywords: dict[str, KeywordRecord] = {}

    def seed_from(self, data: SampleData) -> None:
        """Take the sample data's keywords."""
        for keyword in data.keywords:
            self.keywords[keyword.keyword.upper()] = keyword
            self.core.save("keyword", keyword.keyword.upper(), keyword)

    def restore(self, saved: dict[str, dict[str, dict[str, Any]]]) -> None:
        """Rebuild the keywords from the store."""
        for value in saved.get("keyword", {}).values():
            keyword = KeywordRecord.from_json(value)
            self.keywords[keyword.keyword.upper()] = keyword

    def create_keyword(self, keyword: KeywordRecord) -> dict[str, Any]:
        """POST Keyword: register a new keyword (a duplicate is refused with 409)."""
        self._check_keyword(keyword.keyword)
        with self.core.transaction():
            key = keyword.keyword.upper()
            if key in self.keywords:
                raise Problem(
                    409,
                    f"The keyword {keyword.keyword!r} is already registered; "
                    "use PATCH to change it.",
                )
            self.keywords[key] = keyword
            self.core.save("keyword", key, keyword)
            return keyword.wire()

    def update_keyword(self, name: str, changes: Mapping[str, Any]) -> dict[str, Any]:
        """PATCH Keyword: change the given fields of a registered keyword."""
        with self.core.transaction():
            keyword = self.keywords.get(name.strip().upper())
            if keyword is None:
                raise Problem(404, f"No keyword {name!r} is registered on the account.")
            for attribute, value in changes.items():
                setattr(keyword, attribute, value)
            keyword.updated = self.core.now()
            self.core.save("keyword", keyword.keyword.upper(), keyword)
            return keyword.wire()

    def delete_keyword(self, name: str) -> dict[str, Any]:
        """DELETE Keyword?keyword=...: remove a keyword."""
        with self.core.transaction():
            keyword = self.keywords.pop(name.strip().upper(), None)
            if keyword is None:
                raise Problem(404, f"No keyword {name!r} is registered on the account.")
            self.core.store.delete("keyword", keyword.keyword.upper())
            return keyword.wire()

    def list_keywords(self) -> list[dict[str, Any]]:
        """GET Keyword: every keyword of the account, in alphabetical order."""
        with self.core.lock:
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
