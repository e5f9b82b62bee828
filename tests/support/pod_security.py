"""The Pod Security Standards' ``restricted`` level (Kubernetes 1.30, every ``baseline`` control and the restricted
ones), as the admission controller evaluates a pod spec: one list of violations, empty when the pod is admitted in a
namespace labelled ``pod-security.kubernetes.io/enforce: restricted``. Written from the standard's published
controls (kubernetes.io/docs/concepts/security/pod-security-standards), for the manifests this project creates; no
cluster here runs the admission plugin itself."""

from __future__ import annotations

from typing import Any

BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
    }
)
SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t"})
RESTRICTED_VOLUMES = frozenset(
    {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
)
APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"


def _containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [*spec.get("initContainers", []), *spec.get("containers", []), *spec.get("ephemeralContainers", [])]


def _apparmor_ok(profile: dict[str, Any] | None) -> bool:
    return profile is None or profile.get("type") in ("RuntimeDefault", "Localhost")


def _selinux_problems(where: str, options: dict[str, Any] | None) -> list[str]:
    if not options:
        return []
    problems = []
    if options.get("type", "") not in SELINUX_TYPES:
        problems.append(f"{where}: seLinuxOptions.type {options['type']!r}")
    if options.get("user") or options.get("role"):
        problems.append(f"{where}: seLinuxOptions.user/role set")
    return problems


def baseline_violations(metadata: dict[str, Any], spec: dict[str, Any]) -> list[str]:
    problems = []
    pod_security = spec.get("securityContext", {})
    for host in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(host):
            problems.append(f"pod: {host}")
    if pod_security.get("windowsOptions", {}).get("hostProcess"):
        problems.append("pod: windowsOptions.hostProcess")
    if pod_security.get("seccompProfile", {}).get("type") == "Unconfined":
        problems.append("pod: seccompProfile Unconfined")
    if not _apparmor_ok(pod_security.get("appArmorProfile")):
        problems.append("pod: appArmorProfile")
    problems += _selinux_problems("pod", pod_security.get("seLinuxOptions"))
    for sysctl in pod_security.get("sysctls", []):
        if sysctl.get("name") not in SAFE_SYSCTLS:
            problems.append(f"pod: sysctl {sysctl.get('name')}")
    for volume in spec.get("volumes", []):
        if "hostPath" in volume:
            problems.append(f"volume {volume['name']}: hostPath")
    for name, value in (metadata.get("annotations") or {}).items():
        if name.startswith(APPARMOR_ANNOTATION) and value != "runtime/default" and not value.startswith("localhost/"):
            problems.append(f"annotation {name}: {value}")
    for container in _containers(spec):
        where = f"container {container['name']}"
        security = container.get("securityContext", {})
        if security.get("privileged"):
            problems.append(f"{where}: privileged")
        if security.get("windowsOptions", {}).get("hostProcess"):
            problems.append(f"{where}: windowsOptions.hostProcess")
        added = set(security.get("capabilities", {}).get("add", []))
        if added - BASELINE_CAPABILITIES:
            problems.append(f"{where}: capabilities added {sorted(added - BASELINE_CAPABILITIES)}")
        if any(port.get("hostPort") for port in container.get("ports", [])):
            problems.append(f"{where}: hostPort")
        if not _apparmor_ok(security.get("appArmorProfile")):
            problems.append(f"{where}: appArmorProfile")
        problems += _selinux_problems(where, security.get("seLinuxOptions"))
        if security.get("procMount", "Default") != "Default":
            problems.append(f"{where}: procMount {security['procMount']}")
        if security.get("seccompProfile", {}).get("type") == "Unconfined":
            problems.append(f"{where}: seccompProfile Unconfined")
    return problems


def restricted_violations(metadata: dict[str, Any], spec: dict[str, Any]) -> list[str]:
    """Every violation of ``restricted`` (baseline's included); empty when the pod would be admitted."""
    problems = baseline_violations(metadata, spec)
    pod_security = spec.get("securityContext", {})
    for volume in spec.get("volumes", []):
        kinds = set(volume) - {"name"}
        if not kinds <= RESTRICTED_VOLUMES:
            problems.append(f"volume {volume['name']}: {sorted(kinds - RESTRICTED_VOLUMES)}")
    pod_non_root = pod_security.get("runAsNonRoot") is True
    if pod_security.get("runAsUser") == 0:
        problems.append("pod: runAsUser 0")
    pod_seccomp = pod_security.get("seccompProfile", {}).get("type") in ("RuntimeDefault", "Localhost")
    for container in _containers(spec):
        where = f"container {container['name']}"
        security = container.get("securityContext", {})
        if security.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{where}: allowPrivilegeEscalation is not false")
        non_root = security.get("runAsNonRoot")
        if non_root is False or (non_root is None and not pod_non_root):
            problems.append(f"{where}: runAsNonRoot is not true")
        if security.get("runAsUser") == 0:
            problems.append(f"{where}: runAsUser 0")
        seccomp = security.get("seccompProfile", {}).get("type")
        if not (seccomp in ("RuntimeDefault", "Localhost") or (seccomp is None and pod_seccomp)):
            problems.append(f"{where}: seccompProfile is not RuntimeDefault or Localhost")
        capabilities = security.get("capabilities", {})
        if "ALL" not in capabilities.get("drop", []):
            problems.append(f"{where}: capabilities do not drop ALL")
        if set(capabilities.get("add", [])) - {"NET_BIND_SERVICE"}:
            problems.append(f"{where}: capabilities add more than NET_BIND_SERVICE")
    return problems
