"""What runs beside the sandbox's state: the server, the realtime ticker, callback delivery.

What runs beside the state: serving with uvicorn (``_serve``), the realtime ticker
(``_ticker``) and the background delivery of callbacks (``_delivery``).
"""
