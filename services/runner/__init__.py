"""The workspace runner: runs workspace commands for the services that must not (diagnoser, validator, detector)
in the existing sandbox (``libs.sandbox.run.run_sandboxed``), and holds nothing worth stealing: no Kafka client,
no signing key, no key registry, no ledger, no artifact store. docs/deploy.md, "The workspace runner".

``main.py`` (entrypoint) starts ``server.py`` (HTTP: one command per ``POST /v1/commands``, probes), which hands
each request to ``handler.py`` (one command: ``layout.py`` lays the request out under a folder of its own, the
sandbox runs it, ``answer.py`` writes the answer in the caller's terms); ``readiness.py`` probes the sandbox.
It imports no other service.
"""
