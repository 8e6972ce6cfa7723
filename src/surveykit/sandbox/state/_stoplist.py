"""The stop list: the numbers and addresses that replied STOP (or were put on it).

Sends read it (:mod:`._messages`: a destination on it is refused as Blocked); inbound
STOP and UNSTOP change it (:mod:`._inbound`), and so does the control API.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from surveykit.sandbox.data._seed import SampleData
from surveykit.sandbox.state._core import StateCore
from surveykit.sandbox.state._records import iso, parse_iso


class StopList:
    """Addresses on the stop list (lower case), with when they joined it."""

    def __init__(self, core: StateCore) -> None:
        self.core = core
        self.clear()

    def clear(self) -> None:
        """Nobody on the stop list."""
        self.stop_list: dict[str, datetime] = {}

    def seed_from(self, data: SampleData) -> None:
        """Take the sample data's stop list."""
        for address in data.stop_list:
            self.put(address.lower(), self.core.now())

    def restore(self, saved: dict[str, dict[str, dict[str, Any]]]) -> None:
        """Rebuild the stop list from the store."""
        for address, value in saved.get("stop", {}).items():
            self.stop_list[address] = parse_iso(value["at"]) or self.core.now()

    def __contains__(self, address: str) -> bool:
        return address in self.stop_list

    def put(self, key: str, at: datetime) -> None:
        """Put ``key`` (already lower case) on the stop list, the lock held."""
        self.stop_list[key] = at
        self.core.save("stop", key, {"at": iso(at)})

    def drop(self, key: str) -> bool:
        """Take ``key`` off the stop list, the lock held; whether it was on it."""
        if self.stop_list.pop(key, None) is None:
            return False
        self.core.store.delete("stop", key)
        return True

    def add_stop(self, address: str) -> None:
        """Put a number or email address on the stop list."""
        with self.core.transaction():
            self.put(address.strip().lower(), self.core.now())

    def remove_stop(self, address: str) -> bool:
        """Take a number or email address off the stop list; whether it was on it."""
        with self.core.transaction():
            return self.drop(address.strip().lower())


__all__ = ["StopList"]
