"""``python -m services.runner.job_pod receive|collect``: one role of a workspace Job's pod; exit 0 once its one
exchange with the caller succeeded, 1 when it refused the request or nobody came in time, 2 on bad usage."""

from __future__ import annotations

import logging
import os
import sys

from services.runner.job_pod.collect import collect
from services.runner.job_pod.receive import receive

ROLES = {"receive": receive, "collect": collect}


def main(arguments: list[str]) -> int:
    logging.basicConfig(
        level=os.environ.get("MODELGUARD_LOG_LEVEL", "INFO"),
        format="%(asctime)s job-pod %(levelname)s %(name)s: %(message)s",
    )
    if len(arguments) != 1 or arguments[0] not in ROLES:
        print(f"usage: python -m services.runner.job_pod {'|'.join(ROLES)}", file=sys.stderr)
        return 2
    return ROLES[arguments[0]](dict(os.environ))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
