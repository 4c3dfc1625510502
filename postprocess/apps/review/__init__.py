"""The review app: the queue of a finished run in the browser, with the editors' decisions.

``queue`` loads a run's ``--out``; ``listing`` joins it with the decisions store and
filters, groups and pages it; ``anchors`` finds and validates anchor words; ``actions``
records approve / reject / reset; ``security`` guards access (token off loopback) and
changes (CSRF token + same origin); ``api`` is the read-only JSON (``/recommend``,
``/health``); ``pages`` the review page, its form endpoint and the CSV export; ``app``
puts them in one Starlette app; ``server`` runs it under uvicorn. ``apps.serve`` is the
command line.
"""
