"""Workspace commands run by a separate workspace runner (``services/runner``) instead of this process's own
sandbox: the caller's adapter (``client.py``), the wire format both sides share (``protocol.py``,
``parcel.py``, ``trees.py``), what the caller sends (``shipment.py``) and how it checks what comes back
(``answer.py``). docs/deploy.md, "The workspace runner", says why and what it holds.

Import the submodules directly (``from libs.sandbox.remote.client import run_remote``).
"""
