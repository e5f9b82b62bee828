# One image for every ModelGuard service: the command picks the service (docker-compose.yml, the Helm chart
# deploy/helm/modelguard).
# Slim, non-root (uid 10001), no bytecode written at run time, so pods can run with a read-only root filesystem
# (give them a writable /tmp and $MODELGUARD_HOME).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONPATH=/app \
    MODELGUARD_HOME=/var/lib/modelguard \
    MODELGUARD_HEALTH_PORT=8080

# git: workspace snapshots and the validator's isolated copies.
# bubblewrap: the sandbox for workspace code (docs/sandbox.md). Without it, or where the container's runtime
# forbids what it needs, ModelGuard refuses to run workspace code. It runs here as uid 10001 in a user
# namespace, which Docker's and Kubernetes' default seccomp and AppArmor profiles and /proc masking forbid.
# Only the workspace runner (python -m services.runner.main), which holds no secret worth stealing, runs it with
#   docker: --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined
#   kubernetes: seccompProfile Unconfined (or a Localhost profile allowing clone/unshare/mount/pivot_root),
#               appArmorProfile Unconfined, procMount Unmasked (needs hostUsers: false)
# the diagnoser, validator and detector hand it their commands (MODELGUARD_RUNNER; docs/deploy.md, "The workspace
# runner") and keep the default profiles. graphviz: the console's lineage layout (docs/console.md).
RUN apt-get update \
    && apt-get install -y --no-install-recommends git bubblewrap graphviz \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --uid 10001 --user-group --home-dir /var/lib/modelguard --create-home --shell /usr/sbin/nologin modelguard
# docker-compose's key volumes (deploy/compose/init.py): one per service and one for the public registry. A new
# named volume takes the owner of the folder it is first mounted on, so these exist, owned by uid 10001.
RUN install -d -o 10001 -g 10001 -m 0755 /var/lib/modelguard-keys /var/lib/modelguard-keys/registry \
    && for owner in ledger detector context diagnoser repairer validator publisher reporter; do \
         install -d -o 10001 -g 10001 -m 0700 "/var/lib/modelguard-keys/$owner"; \
       done

WORKDIR /app
COPY pyproject.toml README.md ./
COPY contracts contracts
COPY libs libs
COPY services services
COPY modelguard modelguard
RUN pip install . && python -m compileall -q contracts libs services modelguard
COPY fixtures fixtures
COPY policy policy

USER 10001:10001
# 8080: /healthz and /readyz of every service; 8088: the detector's ingestion for model CI (when enabled);
# 8090: the workspace runner's commands
EXPOSE 8080 8088 8090
CMD ["python", "-m", "modelguard", "--help"]
