"""The :class:`~surveykit.sandbox.Sandbox` controls of simulated respondents and campaigns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from surveykit.sandbox.data._behaviour import RespondentModel
from surveykit.sandbox.data._campaign import CAMPAIGN_SURVEY_ID, COUNTRIES
from surveykit.sandbox.state import RespondentAction, SandboxState
from surveykit.sandbox.state._records import Survey


class RespondentControls:
    """Simulated respondents (``docs/sandbox.md``, "Simulated respondents")."""

    _state: SandboxState
    seed: int

    def set_respondent_model(
        self, respondents: RespondentModel | Mapping[str, Any] | bool | None = True
    ) -> RespondentModel | None:
        """Simulate respondents from now on (None or False: stop); returns the model.

        Over HTTP: ``POST /_sandbox/respondents`` (``DELETE`` stops). Actions already
        planned (answers, STOPs) still happen.

        Args:
            respondents: True for the default proportions, a mapping of proportions
                (``{"answer_first": 0.5, "never": 0.5}``; behaviours left out get 0) and
                delays (``min_delay``, ``max_delay`` in seconds), or a
                :class:`~surveykit.sandbox.RespondentModel`.

        Raises:
            ValueError: naming the field: a proportion outside 0..1, proportions that do
                not add up to 1, delays out of order.
        """
        model = RespondentModel.of(respondents)
        self._state.set_respondent_model(model)
        return model

    def respondent_model(self) -> RespondentModel | None:
        """The model respondents are simulated with (None: they are not)."""
        with self._state.lock:
            return self._state.respondent_model

    def respondent_behaviour(self, address: str) -> str:
        """What a number or email address does under the current model.

        One of ``answer_first``, ``answer_after_reminder``, ``never``, ``stop``,
        ``undeliverable`` (:data:`surveykit.sandbox.BEHAVIOURS`), drawn from the seed and
        the address alone. Over HTTP: ``GET /_sandbox/respondents/{address}``.

        Raises:
            ValueError: when respondents are not simulated.
        """
        return self._state.behaviour_of(address)

    def respondent_contacts(self, address: str) -> int:
        """How many messages reached ``address`` while respondents were simulated."""
        return self._state.contacts_of(address)

    def pending_respondent_actions(self) -> list[RespondentAction]:
        """Answers and STOPs still to come (``due``, ``kind``, ``address``), in time order."""
        return self._state.pending_actions()

    def add_campaign_survey(
        self,
        reference: str,
        rows: int,
        *,
        countries: Sequence[str] = COUNTRIES,
        seed: int | None = None,
        survey_id: int = CAMPAIGN_SURVEY_ID,
        channel: str = "SMS",
        source: str | None = None,
    ) -> Survey:
        """Add a survey of ``rows`` respondents invited by nobody yet, for a campaign.

        Its respondents are stored (not generated at request time): GetResults lists them
        with their names and mobile numbers and no ``invited``, ``started`` or
        ``completed`` time until a message reaches them and (with simulated respondents)
        they answer. Numbers are valid mobiles of the ``countries`` taken in turn: ``GB``
        (+44 7400 xxxxxx), ``AU`` (+61 491 57x xxx, the fictional range: 497
        numbers) and ``US`` (555-01xx in twelve area codes from New York to Honolulu:
        1,200 numbers). Four questions: a 1-5 rating, an NPS, Yes/No, free text.
        Over HTTP: ``POST /_sandbox/surveys/campaign``; served: ``--campaign REF:ROWS``.

        Args:
            reference: the survey reference (no survey may have it yet).
            rows: how many respondents.
            countries: where their numbers come from (ISO codes, any of ``GB``, ``AU``,
                ``US``), in turn.
            seed: draws the numbers and names (default: the sandbox's).
            survey_id: the survey's id (no survey may have it yet).
            channel: ``SMS`` or ``WhatsApp``.
            source: the number messages are sent from (default ``447700900300``).

        Raises:
            ValueError: naming the field.
        """
        return self._state.add_campaign_survey(
            reference,
            rows,
            countries=list(countries),
            seed=self.seed if seed is None else seed,
            survey_id=survey_id,
            channel=channel,
            source=source,
        )


__all__ = ["RespondentControls"]
