"""The account: its users and tokens, email routes, webhooks and account callback.

GET Webhook is answered from here; SendEmail's routes and the users' token metadata are
read from here; the callback settings here are where events go when a message has none of
its own. :class:`Account` owns these values and nothing else: it writes nothing itself
(the core saves them with its meta record).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Final

from surveykit.sandbox.data._seed import SampleData
from surveykit.sandbox.state import _rules
from surveykit.sandbox.state._records import CallbackTarget, WebhookRecord


@dataclass(frozen=True)
class User:
    """A sandbox user: an access token and the roles of its account."""

    name: str
    token: str
    roles: frozenset[str]
    metadata: tuple[tuple[str, str], ...] = ()

    @property
    def can_email(self) -> bool:
        """Whether the account holds one of the roles SendEmail needs."""
        return bool(self.roles & {"sa", "Admin", "Organization"})


CALLBACK_USER: Final = User("callback", "", frozenset())
"""Who sends the messages receivers answer callbacks with (the ``user`` of the journal)."""


class Account:
    """The account's settings: users, email routes, webhooks, the account callback."""

    def __init__(self, seed: int, lock: threading.RLock) -> None:
        self.seed = seed
        self.lock = lock
        self.account_callback: CallbackTarget | None = None
        self.clear()

    def clear(self) -> None:
        """Back to an account with nothing configured (the callback is left to ``reset``)."""
        self.account_name = "Sandbox account"
        self.email_routes: dict[str, dict[str, str]] = {}
        self.token_metadata: dict[str, list[dict[str, str]]] = {}
        self.webhooks: list[WebhookRecord] = []
        self.users: dict[str, User] = {}
        self.make_users()

    def make_users(self) -> None:
        """The admin and restricted users, their tokens derived from the seed."""
        admin_meta = tuple(
            self.token_metadata.get("admin", [{"tokenName": "sandbox-admin"}])[0].items()
        )
        user_meta = tuple(
            self.token_metadata.get("restricted", [{"tokenName": "sandbox-analyst"}])[0].items()
        )
        admin = User(
            "admin", _rules.token_for(self.seed, "admin"), frozenset({"Admin"}), admin_meta
        )
        restricted = User(
            "restricted", _rules.token_for(self.seed, "analyst"), frozenset({"Analyst"}), user_meta
        )
        self.users = {admin.token: admin, restricted.token: restricted}

    def seed_from(self, data: SampleData) -> None:
        """Take the sample data's account (its webhooks are saved by the caller)."""
        self.account_name = data.account_name
        self.email_routes = {name.lower(): route for name, route in data.email_routes.items()}
        self.token_metadata = data.token_metadata
        self.make_users()
        self.webhooks = list(data.webhooks)

    def meta(self) -> dict[str, Any]:
        """What the core's meta record keeps of the account."""
        return {
            "account": self.account_name,
            "emailRoutes": self.email_routes,
            "tokenMetadata": self.token_metadata,
            "callbackUrl": self.callback_url,
            "callback": self.account_callback.to_json() if self.account_callback else None,
        }

    def restore(self, meta: dict[str, Any], webhooks: dict[str, dict[str, Any]]) -> None:
        """Rebuild the account from the meta record and the stored webhooks."""
        self.account_name = meta.get("account", self.account_name)
        self.email_routes = meta.get("emailRoutes", {})
        self.token_metadata = meta.get("tokenMetadata", {})
        if meta.get("callback"):
            self.account_callback = CallbackTarget.from_json(meta["callback"])
        elif meta.get("callbackUrl"):
            self.account_callback = CallbackTarget(urls=[meta["callbackUrl"]])
        self.make_users()
        self.webhooks = [WebhookRecord.from_json(v) for v in webhooks.values()]
        self.webhooks.sort(key=lambda w: w.key)

    # ----------------------------------------------------------------- reads

    def user_for(self, authorization: str | None) -> User | None:
        """The user of an ``Authorization: Basic <token>`` header, or None."""
        if not authorization:
            return None
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "basic":
            return None
        return self.users.get(token.strip())

    def webhook_list(self) -> list[dict[str, Any]]:
        """GET Webhook: the account's webhooks."""
        with self.lock:
            return [hook.wire() for hook in self.webhooks]

    def email_route(self, value: str) -> dict[str, str] | None:
        """The email route a SendEmail ``From`` selects: a route's name or sender address."""
        key = value.strip().lower()
        if key in self.email_routes:
            return self.email_routes[key]
        for route in self.email_routes.values():
            if route.get("address", "").lower() == key:
                return route
        return None

    @property
    def callback_url(self) -> str | None:
        """The account callback's first URL (None when no account callback is set)."""
        return self.account_callback.urls[0] if self.account_callback else None


__all__ = ["CALLBACK_USER", "Account", "User"]
