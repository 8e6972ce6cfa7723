from __future__ import annotations

import math

import pandas as pd
import pytest

from surveykit.batch import Template, TemplateError


def test_fields_in_order_without_repeats() -> None:
    tpl = Template.parse("Hi {firstName}, {link} {{literal}} {firstName}")
    assert tpl.fields == ("firstName", "link")
    assert tpl.render({"firstName": "Zoë", "link": "https://t/1"}) == (
        "Hi Zoë, https://t/1 {literal} Zoë"
    )


@pytest.mark.parametrize(
    "text",
    ["{a.b}", "{a[0]}", "{a!r}", "{a:>10}", "{}", "{0}x{", "unbalanced }"],
)
def test_only_plain_column_names(text: str) -> None:
    with pytest.raises(TemplateError, match="message"):
        Template.parse(text)


def test_missing_column_is_named() -> None:
    with pytest.raises(TemplateError, match=r"no column for \{lastName\}"):
        Template.parse("{firstName} {lastName}").check_columns(["firstName"])
    Template.parse("{link}").check_columns([], extra=("link",))


@pytest.mark.parametrize("blank", [None, math.nan, pd.NA, pd.NaT])
def test_missing_values_raise_key_error(blank: object) -> None:
    with pytest.raises(KeyError, match="firstName"):
        Template.parse("Hi {firstName}").render({"firstName": blank})


def test_values_are_rendered_readably() -> None:
    tpl = Template.parse("{n} {x} {t}")
    text = tpl.render({"n": 3.0, "x": 2.5, "t": pd.Timestamp("2026-03-02 09:00", tz="UTC")})
    assert text == "3 2.5 2026-03-02T09:00:00+00:00"


def test_empty_string_is_a_value() -> None:
    assert Template.parse("[{a}]").render({"a": ""}) == "[]"
