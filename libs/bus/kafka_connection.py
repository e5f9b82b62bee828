"""One Kafka connection: where the brokers are and how to authenticate to them.

ModelGuard talks to two Kafka clusters that are often not the same one: its own bus (``MODELGUARD_KAFKA_*``) and
DataHub's, whose MetadataChangeLog topics the context service reads (``MODELGUARD_DATAHUB_KAFKA_*``). Each is a
:class:`KafkaConnection`, checked when it is made so that a wrong setting is one line at start, not a stack trace
from the Kafka client minutes later. Variables, for a prefix ``P``:

=============================  =====================================================================
``P`` + ``BOOTSTRAP``          ``host:port[,host:port...]``
``SECURITY_PROTOCOL``          ``PLAINTEXT`` (default), ``SSL``, ``SASL_PLAINTEXT``, ``SASL_SSL``
``SASL_MECHANISM``             ``PLAIN``, ``SCRAM-SHA-256``, ``SCRAM-SHA-512`` (required with SASL)
``SASL_USERNAME``              required with SASL
``SASL_PASSWORD``              or ``SASL_PASSWORD_FILE`` (a mounted Secret); one of them with SASL
``SSL_CA_FILE``                PEM bundle of the CAs to trust (default: the system's)
``SSL_CERT_FILE``              client certificate (PEM) for mutual TLS; may hold the key too
``SSL_KEY_FILE``               its private key (PEM, unencrypted)
=============================  =====================================================================

The password is never part of ``repr`` nor of :meth:`KafkaConnection.describe`, the form for logs. FastStream and
aiokafka are imported only when a security object is asked for: ``libs.settings`` reads connections, and the
workspace runner, which reads settings, must load no Kafka client.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from faststream.security import BaseSecurity

BUS_PREFIX = "MODELGUARD_KAFKA_"
DATAHUB_PREFIX = "MODELGUARD_DATAHUB_KAFKA_"
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
SUFFIXES = (
    "BOOTSTRAP",
    "SECURITY_PROTOCOL",
    "SASL_MECHANISM",
    "SASL_USERNAME",
    "SASL_PASSWORD",
    "SASL_PASSWORD_FILE",
    "SSL_CA_FILE",
    "SSL_CERT_FILE",
    "SSL_KEY_FILE",
)
"""Every variable a connection reads, after its prefix."""


class KafkaConnectionError(ValueError):
    """A connection setting that cannot work; the message is one line naming the variable."""


def bootstrap_addresses(bootstrap: str) -> list[tuple[str, int]]:
    """``host:port,host:port`` (an optional ``PLAINTEXT://``-style scheme ignored) as (host, port) pairs."""
    addresses = []
    for item in bootstrap.split(","):
        item = item.strip().rpartition("://")[2]
        host, _, port = item.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"bootstrap address {item!r} is not host:port")
        addresses.append((host.strip("[]"), int(port)))
    return addresses


@dataclass(frozen=True)
class KafkaConnection:
    bootstrap: str
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    prefix: str = field(default=BUS_PREFIX, compare=False)
    """Where the settings came from, for the messages: ``MODELGUARD_KAFKA_`` or ``MODELGUARD_DATAHUB_KAFKA_``."""
    _ssl_context: ssl.SSLContext | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        p = self.prefix
        try:
            bootstrap_addresses(self.bootstrap)
        except ValueError as exc:
            raise KafkaConnectionError(f"{p}BOOTSTRAP must be host:port[,host:port...]: {exc}") from None
        if self.security_protocol not in SECURITY_PROTOCOLS:
            raise KafkaConnectionError(
                f"{p}SECURITY_PROTOCOL must be one of {', '.join(SECURITY_PROTOCOLS)}, got {self.security_protocol!r}"
            )
        if self.uses_sasl:
            if self.sasl_mechanism is None:
                raise KafkaConnectionError(
                    f"{p}SASL_MECHANISM is required with {self.security_protocol}: {', '.join(SASL_MECHANISMS)}"
                )
            if self.sasl_mechanism not in SASL_MECHANISMS:
                raise KafkaConnectionError(
                    f"{p}SASL_MECHANISM must be one of {', '.join(SASL_MECHANISMS)}, got {self.sasl_mechanism!r}"
                )
            if not self.username:
                raise KafkaConnectionError(f"{p}SASL_USERNAME is required with {self.security_protocol}")
            if not self.password:
                raise KafkaConnectionError(
                    f"{p}SASL_PASSWORD or {p}SASL_PASSWORD_FILE is required with {self.security_protocol}"
                )
        else:
            named = [n for n, v in (("SASL_MECHANISM", self.sasl_mechanism), ("SASL_USERNAME", self.username)) if v]
            if self.password:
                named.append("SASL_PASSWORD")
            if named:
                raise KafkaConnectionError(
                    f"{p}{named[0]} is set but {p}SECURITY_PROTOCOL is {self.security_protocol}; "
                    "SASL needs SASL_PLAINTEXT or SASL_SSL"
                )
        files = (("SSL_CA_FILE", self.ca_file), ("SSL_CERT_FILE", self.cert_file), ("SSL_KEY_FILE", self.key_file))
        for name, path in files:
            if path is None:
                continue
            if not self.uses_tls:
                raise KafkaConnectionError(
                    f"{p}{name} is set but {p}SECURITY_PROTOCOL is {self.security_protocol}; TLS needs SSL or SASL_SSL"
                )
            if not path.is_file():
                raise KafkaConnectionError(f"{p}{name}: {path} does not exist or is not a file")
        if self.key_file is not None and self.cert_file is None:
            raise KafkaConnectionError(f"{p}SSL_KEY_FILE is set without {p}SSL_CERT_FILE (the client certificate)")
        if self.uses_tls:
            object.__setattr__(self, "_ssl_context", self._make_ssl_context())

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol.startswith("SASL_")

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    def _make_ssl_context(self) -> ssl.SSLContext:
        p = self.prefix
        try:
            context = ssl.create_default_context(cafile=str(self.ca_file) if self.ca_file else None)
        except (ssl.SSLError, OSError) as exc:
            raise KafkaConnectionError(f"{p}SSL_CA_FILE: {self.ca_file} is not a PEM CA bundle: {exc}") from None
        if self.cert_file is not None:
            try:
                context.load_cert_chain(str(self.cert_file), str(self.key_file) if self.key_file else None)
            except (ssl.SSLError, OSError) as exc:
                raise KafkaConnectionError(
                    f"{p}SSL_CERT_FILE/{p}SSL_KEY_FILE: not a PEM certificate and its unencrypted key: {exc}"
                ) from None
        return context

    def security(self) -> BaseSecurity | None:
        """FastStream's security object for a ``KafkaBroker(security=...)``; None for PLAINTEXT."""
        from faststream.security import BaseSecurity, SASLPlaintext, SASLScram256, SASLScram512

        if self.uses_sasl:
            classes = {"PLAIN": SASLPlaintext, "SCRAM-SHA-256": SASLScram256, "SCRAM-SHA-512": SASLScram512}
            sasl = classes[self.sasl_mechanism or ""]
            assert self.username is not None and self.password is not None  # checked in __post_init__
            return sasl(self.username, self.password, ssl_context=self._ssl_context, use_ssl=self.uses_tls)
        if self.uses_tls:
            return BaseSecurity(ssl_context=self._ssl_context, use_ssl=True)
        return None

    def client_options(self) -> dict[str, Any]:
        """Keyword arguments for a raw aiokafka client (consumer, producer, admin): the address and the security."""
        from faststream.kafka.security import parse_security

        return {"bootstrap_servers": self.bootstrap, **parse_security(self.security())}

    def describe(self) -> str:
        """For logs: the address and how it authenticates, never the password."""
        if self.uses_sasl:
            return f"{self.bootstrap} ({self.security_protocol} {self.sasl_mechanism} as {self.username})"
        return f"{self.bootstrap} ({self.security_protocol})"


def connection_to(target: KafkaConnection | str) -> KafkaConnection:
    """A connection as it is, or a bare bootstrap address as a PLAINTEXT connection (the embedded broker, tests)."""
    return target if isinstance(target, KafkaConnection) else KafkaConnection(target)


def kafka_connection_from(environ: Mapping[str, str], prefix: str, default_bootstrap: str) -> KafkaConnection:
    """The connection the variables under ``prefix`` describe; ``default_bootstrap`` when ``BOOTSTRAP`` is unset."""

    def value(suffix: str) -> str | None:
        raw = environ.get(prefix + suffix, "").strip()
        return raw or None

    def path(suffix: str) -> Path | None:
        raw = value(suffix)
        return Path(raw) if raw else None

    password = environ.get(prefix + "SASL_PASSWORD") or None
    password_file = path("SASL_PASSWORD_FILE")
    if password is not None and password_file is not None:
        raise KafkaConnectionError(f"{prefix}SASL_PASSWORD and {prefix}SASL_PASSWORD_FILE are both set; set one")
    if password_file is not None:
        try:
            password = password_file.read_text(encoding="utf-8").rstrip("\r\n") or None
        except (OSError, UnicodeDecodeError) as exc:
            raise KafkaConnectionError(f"{prefix}SASL_PASSWORD_FILE: cannot read {password_file}: {exc}") from None
        if password is None:
            raise KafkaConnectionError(f"{prefix}SASL_PASSWORD_FILE: {password_file} is empty")
    protocol = value("SECURITY_PROTOCOL")
    mechanism = value("SASL_MECHANISM")
    return KafkaConnection(
        bootstrap=value("BOOTSTRAP") or default_bootstrap,
        security_protocol=protocol.upper() if protocol else "PLAINTEXT",
        sasl_mechanism=mechanism.upper() if mechanism else None,
        username=value("SASL_USERNAME"),
        password=password,
        ca_file=path("SSL_CA_FILE"),
        cert_file=path("SSL_CERT_FILE"),
        key_file=path("SSL_KEY_FILE"),
        prefix=prefix,
    )


def datahub_connection_from(environ: Mapping[str, str], bus: KafkaConnection) -> KafkaConnection:
    """DataHub's Kafka: the bus itself when no ``MODELGUARD_DATAHUB_KAFKA_*`` variable is set (one cluster for
    both, today's single-broker setup), else its own connection, whose bootstrap defaults to the bus's."""
    if not any(environ.get(DATAHUB_PREFIX + suffix, "").strip() for suffix in SUFFIXES):
        return bus
    return kafka_connection_from(environ, DATAHUB_PREFIX, bus.bootstrap)
