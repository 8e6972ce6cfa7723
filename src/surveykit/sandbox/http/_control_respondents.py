"""The control API of simulated respondents and campaign surveys (admin token).

==========================================  ============================================
``GET /_sandbox/respondents``               the model (``null`` when not simulating)
``POST /_sandbox/respondents``              set it: ``{"answerFirst", "answerAfterReminder",
                                            "never", "stop", "undeliverable", "minDelay",
                                            "maxDelay", "seed"}`` (an empty body: defaults)
``DELETE /_sandbox/respondents``            stop simulating
``GET /_sandbox/respondents/{address}``     ``{"address", "behaviour", "contacts"}``
``POST /_sandbox/surveys/campaign``         ``{"reference", "rows", "countries", "seed",
                                            "surveyId", "channel", "source"}``
==========================================  ============================================
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from surveykit.sandbox.data._behaviour import RespondentModel
from surveykit.sandbox.data._campaign import CAMPAIGN_SURVEY_ID, COUNTRIES
from surveykit.sandbox.http._control import _json, _state, control
from surveykit.sandbox.state import _fields as fields


def _model_body(model: RespondentModel | None) -> dict[str, Any] | None:
    return None if model is None else model.wire()


@control
async def respondents(request: Request) -> Response:
    """GET, POST and DELETE /_sandbox/respondents: the model of simulated respondents."""
    state = _state(request)
    if request.method == "DELETE":
        state.set_respondent_model(None)
    elif request.method == "POST":
        body = await _json(request)
        state.set_respondent_model(RespondentModel.from_wire(body))
    with state.lock:
        return JSONResponse(_model_body(state.respondent_model))


@control
async def respondent(request: Request) -> Response:
    """GET /_sandbox/respondents/{address}: what an address does, and its contacts so far."""
    address = request.path_params["address"]
    state = _state(request)
    return JSONResponse(
        {
            "address": address,
            "behaviour": state.behaviour_of(address),
            "contacts": state.contacts_of(address),
        }
    )


_CAMPAIGN_NAMES = ("reference", "rows", "countries", "seed", "surveyId", "channel", "source")


@control
async def campaign_survey(request: Request) -> Response:
    """POST /_sandbox/surveys/campaign: a survey of stored respondents nobody invited yet."""
    body = await _json(request)
    fields.known(body, _CAMPAIGN_NAMES)
    reference = fields.text("reference", fields.required(body, "reference"), max_length=200)
    rows = fields.whole("rows", fields.required(body, "rows"), low=0, high=10_000)
    countries = body.get("countries", list(COUNTRIES))
    if not isinstance(countries, list) or not all(isinstance(c, str) for c in countries):
        raise ValueError(f"countries: expected a list of country codes, got {countries!r}")
    state = _state(request)
    seed = fields.whole("seed", body.get("seed"), low=-(2**63), high=2**63 - 1, optional=True)
    survey_id = fields.whole(
        "surveyId", body.get("surveyId", CAMPAIGN_SURVEY_ID), low=1, high=2**31 - 1
    )
    channel = fields.text("channel", body.get("channel", "SMS"), max_length=20)
    source = fields.text("source", body.get("source"), optional=True, max_length=64)
    assert reference is not None and rows is not None and survey_id is not None
    assert channel is not None
    survey = state.add_campaign_survey(
        reference,
        rows,
        countries=countries,
        seed=state.seed if seed is None else seed,
        survey_id=survey_id,
        channel=channel,
        source=source,
    )
    return JSONResponse(
        {
            "reference": survey.reference,
            "surveyId": survey.survey_id,
            "rows": rows,
            "channel": survey.channel,
            "source": survey.source,
        }
    )


def routes() -> list[BaseRoute]:
    """The control routes of simulated respondents."""
    return [
        Route("/_sandbox/respondents", respondents, methods=["GET", "POST", "DELETE"]),
        Route("/_sandbox/respondents/{address}", respondent, methods=["GET"]),
        Route("/_sandbox/surveys/campaign", campaign_survey, methods=["POST"]),
    ]


__all__ = ["routes"]
