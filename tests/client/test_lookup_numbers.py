"""lookup_frame reads numbers as the import does, marks number_check, honours region/strict."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pandas as pd
import phonenumbers
import pytest

import surveykit as sk
from surveykit.sandbox import Sandbox


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(seed=2) as box:
        yield box


def looked_up(sandbox: Sandbox) -> list[str]:
    prefix = "/v3.2/Message/Lookup/"
    return [
        e.path[len(prefix) :]
        for e in sandbox.journal("request")
        if e.path and e.path.startswith(prefix)
    ]


def people() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "mobileNumber": [
                "+44 7911 123456",
                "07911-123-456",  # the same number, national
                "447911123456",  # and as E.164 digits
                "07700 900901",  # the sandbox's VoIP number: unverified
                "hello",
                None,
                "(020) 7946 0018",  # a fictional London landline
            ]
        },
        index=list("abcdefg"),
    )


def test_spellings_of_one_number_are_one_lookup(sandbox: Sandbox) -> None:
    with sk.Client.sandbox(sandbox, default_region="GB") as client:
        frame = sk.lookup_frame(client, people())
    assert frame.attrs["requests"] == 3
    assert sorted(looked_up(sandbox)) == ["442079460018", "447700900901", "447911123456"]
    assert frame.index.tolist() == list("abcdefg")
    assert frame["number"].iloc[:4].tolist() == ["447911123456"] * 3 + ["447700900901"]
    assert frame["number"].iloc[4:6].isna().all()
    checks = frame["number_check"].astype(object).where(frame["number_check"].notna(), None)
    assert checks.tolist() == ["valid"] * 3 + ["unverified", None, None, "valid"]
    assert frame.loc["d", "number_type"] == "VoIP"
    assert frame.loc["g", "number_type"] == "Landline"
    assert frame.loc["e", "error"] == "not a phone number"
    assert frame.loc["f", "error"] == "no number"
    assert frame.loc["a", "number_type"] == frame.loc["c", "number_type"] == "Mobile"
    # The premise of the checks, from phonenumbers itself.
    assert not phonenumbers.is_valid_number(phonenumbers.parse("+447700900901"))
    assert phonenumbers.is_valid_number(phonenumbers.parse("+442079460018"))


def test_the_calls_region_beats_the_clients(sandbox: Sandbox) -> None:
    df = pd.DataFrame({"phone": ["0491 570 156", "(04) 9157 0157"]})
    with sk.Client.sandbox(sandbox, default_region="GB") as client:
        frame = sk.lookup_frame(client, df, column="phone", region="AU")
        without = sk.lookup_frame(client, df, column="phone")
    assert frame["number"].tolist() == ["61491570156", "61491570157"]
    assert frame["carrier"].tolist() == ["Telstra", "Telstra"]
    # Read as British, they are not numbers at all.
    assert without["number"].isna().all()
    assert without["error"].str.startswith("not a valid number for region GB").all()


def test_strict_refuses_unverified_numbers_without_looking_them_up(sandbox: Sandbox) -> None:
    with sk.Client.sandbox(sandbox, default_region="GB") as client:
        frame = sk.lookup_frame(client, people(), strict=True)
    assert frame.attrs["requests"] == 2
    assert "447700900901" not in looked_up(sandbox)
    assert pd.isna(frame.loc["d", "number"]) and pd.isna(frame.loc["d", "number_check"])
    assert frame.loc["d", "error"] == (
        "not a valid number for region GB (unverified, refused as strict=True)"
    )


def test_digits_read_once_are_not_read_again_by_the_clients_region(sandbox: Sandbox) -> None:
    # +45 82 12 34 56 is Danish; its digits alone read in the US are +1 458-212-3456.
    danish, us = phonenumbers.parse("+4582123456"), phonenumbers.parse("4582123456", "US")
    assert phonenumbers.is_valid_number(danish) and phonenumbers.is_valid_number(us)
    with sk.Client.sandbox(sandbox, default_region="US") as client:
        frame = sk.lookup_frame(client, pd.DataFrame({"mobileNumber": ["+45 82 12 34 56"]}))
    assert frame["number"].tolist() == ["4582123456"]
    assert looked_up(sandbox) == ["4582123456"]


def test_an_unknown_region_is_a_validation_error_naming_it(sandbox: Sandbox) -> None:
    with sk.Client.sandbox(sandbox) as client, pytest.raises(sk.ValidationError) as caught:
        sk.lookup_frame(client, people(), region="XX")
    assert caught.value.fields == ["region"]
    assert "'XX'" in str(caught.value)
    assert looked_up(sandbox) == []


def test_async_lookup_frame_reads_numbers_the_same_way(sandbox: Sandbox) -> None:
    async def main() -> pd.DataFrame:
        async with sk.AsyncClient.sandbox(sandbox, default_region="GB") as client:
            return await sk.lookup_frame(client, people())

    frame = asyncio.run(main())
    assert frame.attrs["requests"] == 3
    assert frame["number"].iloc[:4].tolist() == ["447911123456"] * 3 + ["447700900901"]
    assert frame.loc["d", "number_check"] == "unverified"
