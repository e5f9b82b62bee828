"""The workspace runner's two roles inside a workspace Job's pod (``libs/sandbox/job/pod.py`` says the pod's
shape), both in ModelGuard's image, neither holding anything worth stealing:

- ``receive`` (the init container): ``receive.py`` takes exactly one request parcel from the caller that created
  the Job (its bearer token), ``layout.py`` lays it out in the pod's volumes and writes the launcher and its plan;
- ``collect`` (beside the model's container): ``collect.py`` answers the caller's one ``GET /v1/answer`` with the
  answer parcel ``answer.py`` packs from what the command left.

``one_shot.py`` is their HTTP: one token, one successful exchange, a deadline. ``python -m services.runner.job_pod
receive|collect``."""
