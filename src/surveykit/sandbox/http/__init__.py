"""The sandbox's HTTP side: the ASGI app, the v3.2 routes, the control API, wire formats.

``_app`` (credentials, sizes, journal, faults around the routes), ``_routes`` (HTTP in, a
state operation, HTTP out), ``_control`` and ``_control_respondents`` (the ``/_sandbox``
control API), ``_wire`` (bodies in and out), ``_results`` (GetResults, streamed),
``_openapi`` and ``_openapi_schemas`` (``GET /openapi.json``).
"""
