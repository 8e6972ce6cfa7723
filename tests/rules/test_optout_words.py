"""Opt-outs in other words: the conservative rule, its word lists, negations left alone."""

from __future__ import annotations

import pytest

from surveykit.rules.optout_words import normalise, read_optout

OPT_OUT = [
    "Please stop texting me!",
    "unsubscribe",
    "Remove me",
    "no more messages",
    "STOP.",
    "stop now please",
    "quit",
    "End",
    "Cancel",
    "revoke",
    "opt-out",
    "don't text me again",
    "Take me off your list",
    "I revoke my consent",
    "please remove me from your mailing list",
    "leave me alone",
    "Arrêtez de m’envoyer des SMS",
    "Désabonnez-moi svp",
    "Ne m'envoyez plus de messages",
    "je ne veux plus recevoir de messages",
    "plus de sms svp",
]
REVIEW = [
    "Stop, who is this?",
    "No. Stop.",
    "Stop sending so many texts, it is annoying",
    "STOP texting me already",
    "5 - unsubscribe",
    "Vous pouvez arrêter maintenant ? désabonner",
]
LEFT_ALONE = [
    "Don't stop, I love these surveys",
    "do not unsubscribe me",
    "I can't stop smiling",
    "At the end of the day, great service",
    "cancel my order was easy",
    "n'arrêtez pas",
    "Très bien, merci !",
    "Rien à signaler 👍",
    "5",
    "Yes",
    "",
    None,
]


@pytest.mark.parametrize("text", OPT_OUT)
def test_clear_opt_outs(text: str) -> None:
    reading = read_optout(text)
    assert reading is not None and reading.verdict == "opt_out", reading


@pytest.mark.parametrize("text", REVIEW)
def test_unsure_replies_are_flagged_for_review(text: str) -> None:
    reading = read_optout(text)
    assert reading is not None and reading.verdict == "review", reading


@pytest.mark.parametrize("text", LEFT_ALONE)
def test_negations_and_common_words_are_left_alone(text: str | None) -> None:
    assert read_optout(text) is None


def test_language_and_words_are_reported() -> None:
    reading = read_optout("Désabonnez-moi svp")
    assert reading is not None and (reading.language, reading.words) == ("fr", "desabonnez moi")


def test_normalise() -> None:
    assert normalise("  Arrêtez, S’IL VOUS PLAÎT !! ") == "arretez s il vous plait"
