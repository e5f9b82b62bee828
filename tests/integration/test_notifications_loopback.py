"""Notifications over real HTTP: the publisher, in live mode against loopback GitHub and DataHub, tells a Slack
incoming webhook and a signed webhook (both a local HTTP server) once per incident state. The receiver checks the
signature as a real one would; hostile text from DataHub cannot become a Slack mention; a retry, a CI re-run or a
receiver that failed once sends nothing twice; without permission to apply, nothing is sent and the plan is a file;
the webhook URL and secret appear nowhere."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from contracts.events.publication import Published
from libs.settings import PublishingSettings, Settings, SettingsError, load_settings
from services.publisher.channel_errors import ChannelUnavailable
from services.publisher.handler import publish
from services.publisher.publication_channels import LiveOptions, publication_channels
from tests.support.fake_datahub_gms import FakeDataHubGms
from tests.support.fake_github import FakeGitHub
from tests.support.loopback_http import LoopbackServer, Reply, Request
from tests.support.sample_events import Keys
from tests.unit.publisher.publisher_inputs import make_keys, signed, validated_payload, withheld_payload

GITHUB_TOKEN = "ghp_" + "N0tifyT0k3n" * 3
SLACK_PATH = "/services/T0001/B0001/" + "xoxbSlackHookSecret42"
SECRET = "webhook-shared-secret-0123456789"
NOW = 1_800_000_000.0


class Receiver(LoopbackServer):
    """Slack's incoming webhook and a team's webhook receiver: 200 for what arrives, as both answer."""

    def route(self, request: Request) -> Reply:
        return Reply(200, {"ok": True})

    def received(self, path: str) -> list[Request]:
        return [r for r in self.requests if r.method == "POST" and r.path == path]


@dataclass
class World:
    github: FakeGitHub
    gms: FakeDataHubGms
    receiver: Receiver
    root: Path
    keys: Keys

    def settings(self, apply: tuple[str, ...]) -> Settings:
        return dataclasses.replace(
            load_settings(),
            publish_dir=self.root / "publications",
            publishing=PublishingSettings(
                mode="live",
                apply=frozenset(apply),
                github_api_url=self.github.base_url,
                datahub_gms_url=self.gms.base_url,
            ),
        )

    def publish(
        self, payload: object, seconds: int = 0, apply: tuple[str, ...] = ("github", "datahub", "slack", "webhook")
    ) -> Published:
        env = {
            "GITHUB_TOKEN": GITHUB_TOKEN,
            "MODELGUARD_SLACK_WEBHOOK_URL": self.receiver.base_url + SLACK_PATH,
            "MODELGUARD_WEBHOOK_URL": self.receiver.base_url + "/hooks/modelguard",
            "MODELGUARD_WEBHOOK_SECRET": SECRET,
        }
        options = LiveOptions(sleep=lambda _s: None, clock=lambda: NOW, datahub_retries=0)
        channels = publication_channels(self.settings(apply), env, options)
        return publish(
            signed(self.keys, payload, seconds=seconds), channels.github, channels.datahub, notifier=channels.notifier
        )  # type: ignore[arg-type]


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    with (
        FakeGitHub(tokens={GITHUB_TOKEN: "modelguard[bot]"}) as github,
        FakeDataHubGms() as gms,
        Receiver() as receiver,
    ):
        yield World(github, gms, receiver, tmp_path, make_keys())


def _statuses(published: Published) -> list[tuple[str, str]]:
    return [(n.channel, n.status) for n in published.notifications]


def test_each_state_of_an_incident_is_told_once_on_each_channel_and_the_webhook_is_signed(world: World) -> None:
    first = world.publish(validated_payload("run-1"))
    assert _statuses(first) == [("slack", "sent"), ("webhook", "sent")]
    assert {n.target for n in first.notifications} == {"127.0.0.1"} and not any(n.dry_run for n in first.notifications)

    [hook] = world.receiver.received("/hooks/modelguard")
    timestamp = hook.headers["x-modelguard-timestamp"]
    expected = hmac.new(SECRET.encode(), timestamp.encode() + b"." + hook.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(hook.headers["x-modelguard-signature"], f"sha256={expected}")
    assert timestamp == str(int(NOW))
    document = json.loads(hook.body)
    assert (document["type"], document["state"], document["delivery_id"]) == (
        "modelguard.incident.state",
        "repair_validated",
        hook.headers["x-modelguard-delivery"],
    )
    [slack] = world.receiver.received(SLACK_PATH)
    assert "validated" in json.dumps(slack.json()["blocks"])

    retried = world.publish(validated_payload("run-1"))  # the bus delivers the same input again
    rerun = world.publish(validated_payload("run-2"), seconds=60)  # CI runs again: the same finding, a new run
    assert _statuses(retried) == _statuses(rerun) == [("slack", "noop"), ("webhook", "noop")]
    withheld = world.publish(withheld_payload("the repair was refused by policy"), seconds=120)  # a new state
    assert _statuses(withheld) == [("slack", "sent"), ("webhook", "sent")]
    assert len(world.receiver.received(SLACK_PATH)) == len(world.receiver.received("/hooks/modelguard")) == 2


def test_hostile_text_from_datahub_is_shown_not_interpreted_by_slack(world: World) -> None:
    payload = validated_payload()
    hostile = payload.workspace.model_copy(
        update={"model_urn": "urn:li:mlModel:(x,<!channel> <https://evil|click>,PROD)"}
    )
    world.publish(payload.model_copy(update={"workspace": hostile}))
    [slack] = world.receiver.received(SLACK_PATH)
    text = slack.body.decode()
    assert "<!channel>" not in text and "<https://evil" not in text
    assert "&lt;!channel&gt;" in text


def test_a_receiver_that_fails_once_is_retried_by_the_bus_without_sending_twice(world: World) -> None:
    world.receiver.fail("POST", "^/hooks/modelguard$", 503, message="receiver restarting")
    with pytest.raises(ChannelUnavailable, match="answered 503"):
        world.publish(validated_payload())
    again = world.publish(validated_payload())
    assert _statuses(again) == [("slack", "noop"), ("webhook", "sent")], "Slack got it the first time"
    assert len(world.receiver.received(SLACK_PATH)) == 1


def test_a_receiver_that_refuses_is_reported_failed_and_the_publication_stands(world: World) -> None:
    world.receiver.fail("POST", f"^{SLACK_PATH}$", 404, message="no_service")
    published = world.publish(validated_payload())
    assert _statuses(published) == [("slack", "failed"), ("webhook", "sent")]
    assert published.channels and all(c.status == "created" for c in published.channels)


def test_without_permission_nothing_is_sent_and_no_secret_is_anywhere(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    published = world.publish(validated_payload(), apply=("github", "datahub"))
    assert _statuses(published) == [("slack", "sent"), ("webhook", "sent")] and all(
        n.dry_run for n in published.notifications
    )
    assert world.receiver.requests == []
    planned = sorted((world.root / "publications" / "dry-run" / "notifications").rglob("*.json"))
    assert [p.parent.name for p in planned] == ["slack", "webhook"]
    texts = [p.read_text() for p in world.root.rglob("*") if p.is_file() and p.suffix in (".json", ".md")]
    texts += [caplog.text, published.model_dump_json()]
    for secret in (SECRET, SLACK_PATH.rsplit("/", 1)[1]):
        assert not [t for t in texts if secret in t]


@pytest.mark.parametrize(
    ("env", "refusal"),
    [
        ({"MODELGUARD_WEBHOOK_URL": "https://hooks.example.com/x"}, "needs MODELGUARD_WEBHOOK_SECRET"),
        (
            {"MODELGUARD_WEBHOOK_URL": "https://hooks.example.com/x", "MODELGUARD_WEBHOOK_SECRET": "short"},
            "at least 16",
        ),
        ({"MODELGUARD_SLACK_WEBHOOK_URL": "http://hooks.slack.com/services/x"}, "must be an https://"),
        ({"MODELGUARD_SLACK_WEBHOOK_URL_FILE": "/nonexistent/slack-url"}, "cannot read /nonexistent/slack-url"),
    ],
)
def test_a_notification_setting_that_cannot_work_is_one_line(world: World, env: dict[str, str], refusal: str) -> None:
    with pytest.raises(SettingsError, match=refusal) as refused:
        publication_channels(world.settings(()), env, LiveOptions())
    assert "\n" not in str(refused.value)
