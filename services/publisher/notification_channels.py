"""Where a notification goes: a Slack incoming webhook, or a generic webhook whose requests are signed.

The signed webhook posts the notification's JSON document with three headers: `X-ModelGuard-Delivery` (the
incident and state, stable across retries), `X-ModelGuard-Timestamp` (Unix seconds) and
`X-ModelGuard-Signature: sha256=<hex>`, the HMAC-SHA256 with the shared secret of `<timestamp>.<body>`; a receiver
recomputes it over the raw body and refuses a stale timestamp. Both channels answer the same way: 2xx is sent;
429, 5xx or no answer is `ChannelUnavailable` (the bus tries the publication again, and what was already sent
is not sent twice); another 4xx is `ChannelRejected` (reported as failed). The Slack webhook's URL is itself a
credential: it never appears in a result, a log line or an exception, only its host does.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

import httpx

from libs.atomic_file import atomic_write
from libs.canonical_json import canonical_bytes
from services.publisher.channel_errors import ChannelRejected, ChannelUnavailable
from services.publisher.notification_message import Notification
from services.publisher.secret_redaction import SecretRedactor

Channel = Literal["slack", "webhook"]


class NotificationSender(Protocol):
    channel: Channel
    target: str
    dry_run: bool

    def send(self, notification: Notification) -> None: ...


def host_of(url: str) -> str:
    return urlsplit(url).hostname or "?"


def signature(secret: str, timestamp: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()


class _Poster:
    def __init__(self, url: str, client: httpx.Client, redactor: SecretRedactor) -> None:
        self._url, self._client, self._redactor = url, client, redactor
        redactor.add(url)

    def post(self, what: str, body: bytes, headers: dict[str, str]) -> None:
        try:
            answer = self._client.post(self._url, content=body, headers={"Content-Type": "application/json", **headers})
        except httpx.HTTPError as exc:
            message = self._redactor.redact(f"{what} to {host_of(self._url)} failed: {type(exc).__name__}: {exc}")
            raise ChannelUnavailable(message[:500]) from None
        if 200 <= answer.status_code < 300:
            return
        said = self._redactor.redact(
            f"{what} to {host_of(self._url)} answered {answer.status_code}: {answer.text[:200]}"
        )
        if answer.status_code == 429 or answer.status_code >= 500:
            retry_after = answer.headers.get("Retry-After", "")
            raise ChannelUnavailable(said, float(retry_after) if retry_after.isdigit() else 5.0)
        raise ChannelRejected(said, answer.status_code)


class SlackWebhook:
    channel: Channel = "slack"
    dry_run = False

    def __init__(self, url: str, client: httpx.Client, redactor: SecretRedactor) -> None:
        self.target = host_of(url)
        self._poster = _Poster(url, client, redactor)

    def send(self, notification: Notification) -> None:
        body = json.dumps(notification.slack_document(), separators=(",", ":")).encode()
        self._poster.post("the Slack notification", body, {})


class SignedWebhook:
    channel: Channel = "webhook"
    dry_run = False

    def __init__(
        self,
        url: str,
        secret: str,
        client: httpx.Client,
        redactor: SecretRedactor,
        clock: Callable[[], float] = time.time,
    ) -> None:
        redactor.add(secret)
        self.target = host_of(url)
        self._secret, self._clock = secret, clock
        self._poster = _Poster(url, client, redactor)

    def send(self, notification: Notification) -> None:
        body = canonical_bytes(notification.webhook_document())
        timestamp = str(int(self._clock()))
        headers = {
            "X-ModelGuard-Delivery": notification.delivery_id,
            "X-ModelGuard-Timestamp": timestamp,
            "X-ModelGuard-Signature": signature(self._secret, timestamp, body),
        }
        self._poster.post("the webhook notification", body, headers)


class RecordedNotification:
    """A dry run: what would be sent, as a file under `root/<channel>/`, never the URL or the secret."""

    dry_run = True

    def __init__(self, channel: Channel, target: str, root: Path) -> None:
        self.channel, self.target, self._root = channel, target, root / channel

    def send(self, notification: Notification) -> None:
        document: dict[str, Any] = (
            notification.slack_document() if self.channel == "slack" else notification.webhook_document()
        )
        planned = {"channel": self.channel, "target": self.target, "delivery_id": notification.delivery_id}
        path = self._root / f"{notification.delivery_id.replace(':', '--')}.json"
        atomic_write(path, (json.dumps(planned | {"body": document}, indent=2, sort_keys=True) + "\n").encode())
