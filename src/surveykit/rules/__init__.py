"""What the v3.2 platform decides, as pure functions with no I/O, no server and no pandas.

Written once for both sides: the client (batch, import, campaign) and the sandbox.

* :mod:`~surveykit.rules.sms`: the GSM-7 tables and how many SMS segments a text takes;
* :mod:`~surveykit.rules.windows`: send windows, the shorthand, when a window next opens;
* :mod:`~surveykit.rules.numbers`: a phone number as people write it to E.164 digits;
* :mod:`~surveykit.rules.delivery`: which status a send is refused with, whether it is
  delivered, and whether a failed write may have been acted on;
* :mod:`~surveykit.rules.signing`: the callback signature scheme (signed by the sandbox,
  verified by the receiver);
* :mod:`~surveykit.rules.optout_words`: whether a reply asks to stop in other words
  ("please stop texting me"), with its word lists.
"""
