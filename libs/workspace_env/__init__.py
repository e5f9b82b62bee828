"""Workspace environments (docs/workspace-environments.md): the Python environment a workspace revision declares
(``uv.lock`` with ``pyproject.toml``, or a pinned ``requirements.txt``), built once per digest with uv, wheels only,
from the configured index or an offline wheelhouse, cached under the ModelGuard home, and run read-only by the
sandbox (``libs.sandbox.workspace_interpreter``). A declaration that is refused or a build that fails is an
``EnvironmentUnavailable`` with the resolver's message."""
