"""The two Kafka connections from the environment: every protocol and mechanism, the FastStream security object and
the aiokafka options each gives, DataHub's falling back to the bus, one line for every setting that cannot work,
and no password in a repr or a log line."""

from __future__ import annotations

import os
import ssl
from pathlib import Path

import pytest
from faststream.security import BaseSecurity, SASLPlaintext, SASLScram256, SASLScram512

from libs.bus.kafka_connection import (
    BUS_PREFIX,
    DATAHUB_PREFIX,
    KafkaConnection,
    KafkaConnectionError,
    datahub_connection_from,
    kafka_connection_from,
)
from libs.settings import SettingsError, load_settings
from tests.support.tls_files import TlsFiles, write_tls_files

SECRET = "s3cr3t-pa55word"


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return write_tls_files(tmp_path_factory.mktemp("tls"))


def bus(env: dict[str, str]) -> KafkaConnection:
    return kafka_connection_from(env, BUS_PREFIX, "127.0.0.1:9092")


def test_nothing_set_is_plaintext_to_the_default_address_with_no_security() -> None:
    connection = bus({})
    assert connection == KafkaConnection("127.0.0.1:9092")
    assert connection.security() is None
    assert connection.client_options() == {"bootstrap_servers": "127.0.0.1:9092"}
    assert connection.describe() == "127.0.0.1:9092 (PLAINTEXT)"


@pytest.mark.parametrize(
    ("mechanism", "security_class"),
    [("PLAIN", SASLPlaintext), ("SCRAM-SHA-256", SASLScram256), ("SCRAM-SHA-512", SASLScram512)],
)
@pytest.mark.parametrize("protocol", ["SASL_PLAINTEXT", "SASL_SSL"])
def test_each_sasl_protocol_and_mechanism_gives_its_security_object_and_client_options(
    protocol: str, mechanism: str, security_class: type[BaseSecurity]
) -> None:
    connection = bus(
        {
            "MODELGUARD_KAFKA_BOOTSTRAP": "kafka-0:9093,kafka-1:9093",
            "MODELGUARD_KAFKA_SECURITY_PROTOCOL": protocol.lower(),  # any case
            "MODELGUARD_KAFKA_SASL_MECHANISM": mechanism,
            "MODELGUARD_KAFKA_SASL_USERNAME": "modelguard",
            "MODELGUARD_KAFKA_SASL_PASSWORD": SECRET,
        }
    )
    security = connection.security()
    assert type(security) is security_class
    assert security.username == "modelguard" and security.password == SECRET  # type: ignore[attr-defined]
    tls = protocol == "SASL_SSL"
    assert security.use_ssl is tls
    assert isinstance(security.ssl_context, ssl.SSLContext) if tls else security.ssl_context is None
    options = connection.client_options()
    assert options == {
        "bootstrap_servers": "kafka-0:9093,kafka-1:9093",
        "security_protocol": protocol,
        "ssl_context": security.ssl_context,
        "sasl_mechanism": mechanism,
        "sasl_plain_username": "modelguard",
        "sasl_plain_password": SECRET,
    }
    assert connection.describe() == f"kafka-0:9093,kafka-1:9093 ({protocol} {mechanism} as modelguard)"


def test_ssl_without_sasl_is_a_base_security_with_a_context_verifying_the_given_ca(tls: TlsFiles) -> None:
    connection = bus({"MODELGUARD_KAFKA_SECURITY_PROTOCOL": "SSL", "MODELGUARD_KAFKA_SSL_CA_FILE": str(tls.ca)})
    security = connection.security()
    assert type(security) is BaseSecurity and security.use_ssl
    context = security.ssl_context
    assert isinstance(context, ssl.SSLContext)
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert [c["subject"] for c in context.get_ca_certs()] == [((("commonName", "modelguard test CA"),),)]
    options = connection.client_options()
    assert options == {"bootstrap_servers": "127.0.0.1:9092", "security_protocol": "SSL", "ssl_context": context}


def test_ssl_without_a_ca_file_trusts_the_system_store() -> None:
    context = bus({"MODELGUARD_KAFKA_SECURITY_PROTOCOL": "SSL"}).client_options()["ssl_context"]
    assert isinstance(context, ssl.SSLContext) and context.verify_mode == ssl.CERT_REQUIRED


@pytest.mark.parametrize("layout", ["cert and key", "one file"])
def test_a_client_certificate_for_mutual_tls_loads_as_two_files_or_one(tls: TlsFiles, layout: str) -> None:
    files = (
        {"MODELGUARD_KAFKA_SSL_CERT_FILE": str(tls.cert), "MODELGUARD_KAFKA_SSL_KEY_FILE": str(tls.key)}
        if layout == "cert and key"
        else {"MODELGUARD_KAFKA_SSL_CERT_FILE": str(tls.combined)}
    )
    connection = bus(
        {"MODELGUARD_KAFKA_SECURITY_PROTOCOL": "SSL", "MODELGUARD_KAFKA_SSL_CA_FILE": str(tls.ca), **files}
    )
    assert isinstance(connection.client_options()["ssl_context"], ssl.SSLContext)


def test_a_key_that_is_not_the_certificates_is_one_line(tls: TlsFiles, tmp_path: Path) -> None:
    other = write_tls_files(tmp_path / "other")
    with pytest.raises(KafkaConnectionError) as caught:
        bus(
            {
                "MODELGUARD_KAFKA_SECURITY_PROTOCOL": "SSL",
                "MODELGUARD_KAFKA_SSL_CERT_FILE": str(tls.cert),
                "MODELGUARD_KAFKA_SSL_KEY_FILE": str(other.key),
            }
        )
    assert str(caught.value).startswith(
        "MODELGUARD_KAFKA_SSL_CERT_FILE/MODELGUARD_KAFKA_SSL_KEY_FILE: not a PEM certificate and its unencrypted key"
    )


def test_the_password_comes_from_a_file_without_its_final_newline(tmp_path: Path) -> None:
    secret = tmp_path / "password"
    secret.write_text(SECRET + "\n")
    connection = bus(
        {
            "MODELGUARD_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
            "MODELGUARD_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
            "MODELGUARD_KAFKA_SASL_USERNAME": "modelguard",
            "MODELGUARD_KAFKA_SASL_PASSWORD_FILE": str(secret),
        }
    )
    assert connection.password == SECRET
    assert connection.client_options()["sasl_plain_password"] == SECRET


def _error(env: dict[str, str], prefix: str = BUS_PREFIX) -> str:
    with pytest.raises(KafkaConnectionError) as caught:
        kafka_connection_from(env, prefix, "127.0.0.1:9092")
    message = str(caught.value)
    assert "\n" not in message
    return message


SASL = {"SECURITY_PROTOCOL": "SASL_SSL", "SASL_MECHANISM": "PLAIN", "SASL_USERNAME": "mg", "SASL_PASSWORD": SECRET}


def _env(prefix: str, values: dict[str, str]) -> dict[str, str]:
    return {prefix + k: v for k, v in values.items()}


@pytest.mark.parametrize("prefix", [BUS_PREFIX, DATAHUB_PREFIX])
@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"BOOTSTRAP": "kafka-0"}, "{p}BOOTSTRAP must be host:port[,host:port...]: bootstrap address 'kafka-0'"),
        (
            {"SECURITY_PROTOCOL": "TLS"},
            "{p}SECURITY_PROTOCOL must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL, got 'TLS'",
        ),
        (
            {**SASL, "SASL_MECHANISM": "GSSAPI"},
            "{p}SASL_MECHANISM must be one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, got 'GSSAPI'",
        ),
        (
            {k: v for k, v in SASL.items() if k != "SASL_MECHANISM"},
            "{p}SASL_MECHANISM is required with SASL_SSL: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512",
        ),
        ({k: v for k, v in SASL.items() if k != "SASL_USERNAME"}, "{p}SASL_USERNAME is required with SASL_SSL"),
        (
            {k: v for k, v in SASL.items() if k != "SASL_PASSWORD"},
            "{p}SASL_PASSWORD or {p}SASL_PASSWORD_FILE is required with SASL_SSL",
        ),
        (
            {**SASL, "SECURITY_PROTOCOL": "SSL"},
            "{p}SASL_MECHANISM is set but {p}SECURITY_PROTOCOL is SSL; SASL needs SASL_PLAINTEXT or SASL_SSL",
        ),
        (
            {"SASL_PASSWORD": SECRET},
            "{p}SASL_PASSWORD is set but {p}SECURITY_PROTOCOL is PLAINTEXT; SASL needs SASL_PLAINTEXT or SASL_SSL",
        ),
        (
            {"SSL_CA_FILE": "/etc/hosts"},
            "{p}SSL_CA_FILE is set but {p}SECURITY_PROTOCOL is PLAINTEXT; TLS needs SSL or SASL_SSL",
        ),
        (
            {**SASL, "SASL_PASSWORD_FILE": "/run/secrets/kafka"},
            "{p}SASL_PASSWORD and {p}SASL_PASSWORD_FILE are both set; set one",
        ),
        (
            {"SECURITY_PROTOCOL": "SSL", "SSL_CA_FILE": "/nowhere/ca.crt"},
            "{p}SSL_CA_FILE: /nowhere/ca.crt does not exist or is not a file",
        ),
        (
            {"SECURITY_PROTOCOL": "SSL", "SSL_CERT_FILE": "/nowhere/user.crt"},
            "{p}SSL_CERT_FILE: /nowhere/user.crt does not exist or is not a file",
        ),
        (
            {"SECURITY_PROTOCOL": "SSL", "SSL_KEY_FILE": "/etc/hosts"},
            "{p}SSL_KEY_FILE is set without {p}SSL_CERT_FILE (the client certificate)",
        ),
        (
            {"SECURITY_PROTOCOL": "SSL", "SSL_CA_FILE": "/etc/hosts"},
            "{p}SSL_CA_FILE: /etc/hosts is not a PEM CA bundle",
        ),
        (
            {**{k: v for k, v in SASL.items() if k != "SASL_PASSWORD"}, "SASL_PASSWORD_FILE": "/nowhere/password"},
            "{p}SASL_PASSWORD_FILE: cannot read /nowhere/password",
        ),
    ],
)
def test_every_setting_that_cannot_work_is_one_line_naming_its_variable(
    prefix: str, values: dict[str, str], expected: str
) -> None:
    assert _error(_env(prefix, values), prefix).startswith(expected.format(p=prefix))


def test_an_empty_password_file_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "password"
    empty.write_text("\n")
    values = {**{k: v for k, v in SASL.items() if k != "SASL_PASSWORD"}, "SASL_PASSWORD_FILE": str(empty)}
    assert _error(_env(BUS_PREFIX, values)) == f"MODELGUARD_KAFKA_SASL_PASSWORD_FILE: {empty} is empty"


def test_datahub_is_the_bus_until_one_of_its_variables_is_set() -> None:
    the_bus = bus(_env(BUS_PREFIX, {**SASL, "BOOTSTRAP": "bus:9093"}))
    assert datahub_connection_from({}, the_bus) is the_bus
    assert datahub_connection_from({"MODELGUARD_DATAHUB_KAFKA_BOOTSTRAP": " "}, the_bus) is the_bus
    # its own address, and none of the bus's credentials: DataHub's cluster is another one
    apart = datahub_connection_from({"MODELGUARD_DATAHUB_KAFKA_BOOTSTRAP": "datahub-kafka:9092"}, the_bus)
    assert apart == KafkaConnection("datahub-kafka:9092") and apart.security() is None
    # the same cluster under another identity: the bus's address, DataHub's own credentials
    other_user = datahub_connection_from(_env(DATAHUB_PREFIX, {**SASL, "SASL_USERNAME": "datahub-reader"}), the_bus)
    assert other_user.bootstrap == "bus:9093" and other_user.username == "datahub-reader"
    assert other_user != the_bus
    # set apart but identical: the same connection, so one client does for both
    assert datahub_connection_from(_env(DATAHUB_PREFIX, {**SASL, "BOOTSTRAP": "bus:9093"}), the_bus) == the_bus


def test_settings_hold_both_connections(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in os.environ if k.startswith(("MODELGUARD_KAFKA_", DATAHUB_PREFIX))]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("MODELGUARD_KAFKA_BOOTSTRAP", "bus:9092")
    settings = load_settings()
    assert settings.kafka == KafkaConnection("bus:9092") and settings.kafka_bootstrap == "bus:9092"
    assert settings.datahub_kafka is None and settings.mcl_kafka is settings.kafka and settings.mcl_on_the_bus
    for name, value in _env(DATAHUB_PREFIX, {**SASL, "BOOTSTRAP": "datahub:9096"}).items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    assert settings.mcl_kafka.describe() == "datahub:9096 (SASL_SSL PLAIN as mg)"
    assert not settings.mcl_on_the_bus and settings.kafka == KafkaConnection("bus:9092")
    monkeypatch.setenv("MODELGUARD_DATAHUB_KAFKA_SECURITY_PROTOCOL", "SASL")
    with pytest.raises(SettingsError, match=r"^MODELGUARD_DATAHUB_KAFKA_SECURITY_PROTOCOL must be one of"):
        load_settings()


def test_no_password_in_a_repr_a_description_or_the_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    secret_file = tmp_path / "password"
    secret_file.write_text(SECRET)
    for prefix in (BUS_PREFIX, DATAHUB_PREFIX):
        values = {**SASL, "SASL_PASSWORD": ""} if prefix == BUS_PREFIX else SASL
        for name, value in _env(prefix, values).items():
            monkeypatch.setenv(name, value)
    monkeypatch.setenv("MODELGUARD_KAFKA_SASL_PASSWORD_FILE", str(secret_file))
    settings = load_settings()
    assert settings.kafka.password == SECRET and settings.mcl_kafka.password == SECRET
    for text in (
        repr(settings),
        str(settings),
        repr(settings.kafka),
        settings.kafka.describe(),
        repr(settings.mcl_kafka),
    ):
        assert SECRET not in text
