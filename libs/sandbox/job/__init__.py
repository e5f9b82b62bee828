"""Workspace commands in the model's own image, as a Kubernetes Job (docs/sandbox.md, "In a per-model image"):
the central policy's allow-list of images (``image_policy.py``), the backend's settings (``settings.py``), the Job
(``manifest.py``, ``pod.py``), the Kubernetes API behind a port (``kube_api.py``), how a pod's status reads
(``pod_status.py``), the exchange with the pod (``pod_exchange.py``), the report (``report.py``) and the caller's
flow (``backend.py``). ``launcher.py`` is the one file that runs in the model's image: standard library only.

Import the submodules directly (``from libs.sandbox.job.backend import run_in_job``).
"""
