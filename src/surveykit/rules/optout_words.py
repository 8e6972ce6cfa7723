"""Opt-outs in other words: whether a respondent's reply asks to stop the messages.

A reply such as "please stop texting me" or "remove me" reaches the account as an inbound
Message, not as a Stop callback: the platform's stop list only knows its keywords. US rules
in force since April 2025 (the FCC's TCPA revocation-of-consent order) require honouring
an opt-out made in any reasonable words and name stop, quit, end, revoke, opt out, cancel
and unsubscribe. :func:`read_optout` recognises such replies conservatively, in the
languages of the sandbox's surveys (English and French):

* ``opt_out``: the whole reply, once polite words ("please", "thanks", "merci", "svp") and
  punctuation are set aside, is one of :data:`KEYWORDS` or matches one of :data:`PHRASES`
  ("stop texting me", "no more messages", "remove me from your list", "ne m'envoyez plus
  de messages", ...);
* ``review``: one of :data:`REVIEW_WORDS` ("stop", "unsubscribe", "désabonner", ...)
  appears in a longer reply ("Stop, who is this?", "5 - and stop sending so many"): a
  person should decide, the number is not opted out by this rule;
* nothing (``None``) otherwise, and whenever the word is negated ("don't stop", "do not
  unsubscribe me", "n'arrêtez pas"), and for common words in longer text ("at the end",
  "cancel my order").

Pure: no I/O, no pandas. The opt-out list (:class:`~surveykit.OptOutList`) applies it.
This is a convenience to catch what the platform's keywords miss, not legal advice.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final, Literal

Verdict = Literal["opt_out", "review"]
"""``opt_out``: clearly asks to stop; ``review``: may ask to stop, a person should decide."""

KEYWORDS: Final = {
    "en": (
        "stop",
        "stop all",
        "stopall",
        "quit",
        "end",
        "revoke",
        "opt out",
        "optout",
        "cancel",
        "unsubscribe",
        "remove",
        "remove me",
        "stop it",
    ),
    "fr": (
        "stop",
        "arret",
        "arreter",
        "arretez",
        "arrete",
        "desabonner",
        "desabonnement",
        "desinscription",
        "desinscrire",
        "annuler",
        "fin",
        "stop svp",
    ),
}
"""Words that alone, as the whole reply, are an opt-out (accents are ignored)."""

PHRASES: Final = {
    "en": (
        r"(stop|quit|cease|end) (texting|messaging|contacting|emailing|sending|sms(ing)?)"
        r"( me)?( (these|those|the|your|any|all))?( (texts|messages|sms|emails|surveys))?"
        r"( (any ?more|again))?",
        r"(stop|no|cancel|end)( all)? (texts|messages|sms|emails|surveys)",
        r"(unsubscribe|remove|delete|take|opt) me( out)?( (off|from)( (your|the|this|my|"
        r"mailing|texting|contact) ?(mailing |texting |contact )?list))?",
        r"(i )?(want|would like|wish|need) to (unsubscribe|opt out|be removed|stop "
        r"(receiving|getting) (these|your|the) (texts|messages|sms|emails))",
        r"(please )?opt me out",
        r"no (more|further) (texts|messages|sms|emails|surveys|contact)( please)?",
        r"(do not|dont|don t) (text|message|contact|email|sms) me( (again|any ?more))?",
        r"(i )?revoke( my)? consent",
        r"leave me alone",
        r"(unsubscribe|stop|opt out|cancel) (now|immediately|asap)",
    ),
    "fr": (
        r"(arretez|arreter|cessez|stop) (de m envoyer|d envoyer|les) (des |vos |les )?"
        r"(messages|sms|textos|mails|emails|questionnaires|enquetes)",
        r"(je veux|je voudrais|je souhaite) (me desabonner|me desinscrire|ne plus "
        r"(rien )?recevoir( (de|vos|ces) (messages|sms|textos))?)",
        r"(desabonnez|desinscrivez|retirez|supprimez|enlevez) moi"
        r"( (de|d) (votre|la|cette|vos) (liste|listes|fichier))?",
        r"ne (m envoyez|m ecrivez|me contactez) plus( (de|d) (messages|sms|textos|mails))?"
        r"( (rien))?",
        r"je ne veux plus (rien )?(recevoir )?(de|vos|ces|d) ?(messages|sms|textos|mails)",
        r"plus de (messages|sms|textos|mails)( svp)?",
        r"laissez moi tranquille",
    ),
}
"""Regular expressions that, matching the whole normalised reply, are an opt-out."""

REVIEW_WORDS: Final = {
    "en": ("stop", "unsubscribe", "opt out", "optout", "remove me", "revoke", "no more texts",
           "no more messages"),
    "fr": ("stop", "arret", "arreter", "arretez", "desabonner", "desabonnez", "desinscrire",
           "desinscrivez", "plus de messages", "plus de sms"),
}
"""Words that, somewhere in a longer reply and not negated, flag it for review."""

NEGATIONS: Final = (
    "don t", "dont", "do not", "never", "not", "no", "can t", "cant", "cannot", "won t",
    "wont", "didn t", "didnt", "ne", "n", "ne pas", "pas", "jamais",
)
"""Words that, just before a review word, leave the reply alone ("don't stop")."""

POLITE: Final = (
    "please", "pls", "plz", "thanks", "thank you", "thx", "now", "asap", "merci",
    "svp", "s il vous plait", "s il te plait", "stp", "ok", "okay", "sorry", "desole",
)
"""Words set aside at either end of a reply before it is compared."""

_POLITE_RE: Final = re.compile(
    r"^(?:(?:" + "|".join(map(re.escape, POLITE)) + r") )+|(?: (?:"
    + "|".join(map(re.escape, POLITE)) + r"))+$"
)
_PHRASE_RES: Final = {
    language: tuple(re.compile(pattern) for pattern in patterns)
    for language, patterns in PHRASES.items()
}
_NEGATED: Final = "|".join(re.escape(n) for n in NEGATIONS)


@dataclass(frozen=True)
class OptOutReading:
    """What :func:`read_optout` found in a reply.

    Attributes:
        verdict: ``opt_out`` (the reply clearly asks to stop) or ``review``.
        words: the keyword, phrase or review word that decided it (normalised).
        language: ``en`` or ``fr``.
    """

    verdict: Verdict
    words: str
    language: str


def normalise(text: str) -> str:
    """Lower case, accents and punctuation removed, one space between words.

    Example:
        >>> normalise("  Arrêtez, S'IL VOUS PLAÎT !! ")
        'arretez s il vous plait'
    """
    return " ".join(re.sub(r"[\W_]+", " ", _bare(text)).split())


def _bare(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold().replace("\u2019", "'"))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def read_optout(text: str | None) -> OptOutReading | None:
    """Whether a reply asks to stop the messages: ``opt_out``, ``review`` or None.

    See the module's docstring for the rule, and :data:`KEYWORDS`, :data:`PHRASES`,
    :data:`REVIEW_WORDS` and :data:`NEGATIONS` for the word lists.

    Example:
        >>> read_optout("Please stop texting me!").verdict
        'opt_out'
        >>> read_optout("Stop, who is this?").verdict
        'review'
        >>> read_optout("Don't stop, I love these surveys") is None
        True
    """
    if not text:
        return None
    words = normalise(text)
    if not words:
        return None
    core = _POLITE_RE.sub("", words).strip() or words
    for language, keywords in KEYWORDS.items():
        if core in keywords:
            return OptOutReading("opt_out", core, language)
    for language, patterns in _PHRASE_RES.items():
        for pattern in patterns:
            if pattern.fullmatch(core):
                return OptOutReading("opt_out", core, language)
    # A negation counts within its clause only: "No. Stop." is not "no stop".
    clauses = [normalise(c) for c in re.split(r"[.!?;,:\n]+", _bare(text))]
    for language, review in REVIEW_WORDS.items():
        for word in review:
            for clause in clauses:
                if _unnegated(word, clause):
                    return OptOutReading("review", word, language)
    return None


def _unnegated(word: str, clause: str) -> bool:
    """Whether ``word`` occurs in ``clause`` without a negation just before or after it."""
    for found in re.finditer(rf"(?:^| ){re.escape(word)}(?= |$)", clause):
        before = clause[: found.start()].strip()
        if re.search(rf"(?:^| )(?:{_NEGATED})(?: \w+)?$", before):
            continue  # "don't stop", "do not unsubscribe me", "never ever stop"
        if re.match(r" (?:pas|jamais)(?: |$)", clause[found.end() :]):
            continue  # "n'arrêtez pas"
        return True
    return False


__all__ = [
    "KEYWORDS",
    "NEGATIONS",
    "PHRASES",
    "POLITE",
    "REVIEW_WORDS",
    "OptOutReading",
    "Verdict",
    "normalise",
    "read_optout",
]
