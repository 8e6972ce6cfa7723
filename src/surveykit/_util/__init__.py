"""Small I/O helpers shared across layers that have no other common home.

* :mod:`~surveykit._util.atomic`: every file surveykit writes (results, reports, journals'
  neighbours, doctor bundles) is written whole or not at all;
* :mod:`~surveykit._util.net`: the listening sockets of the servers surveykit starts (the
  sandbox and the callback listener);
* :mod:`~surveykit._util.serving`: the limits both servers keep against strangers (idle and
  slow connections, long heads, unread bodies, ambiguous framing);
* :mod:`~surveykit._util.dual`: ``@returns(T)``, a function taking a sync or an async client
  that answers in kind (``sync_results``, ``import_frame``, ``send_batch``...). It knows the
  client only as a type, so that results (below the client) can use it.

They sit below every package (they import nothing of surveykit) because their users are in
several layers: results, respondents, batch, report, client, doctor, callbacks and the
command line.
"""
