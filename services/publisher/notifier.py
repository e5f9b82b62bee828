"""One message per incident state and channel: each sender is asked only when the log says it was not sent."""

from __future__ import annotations

import logging

from contracts.events.publication import NotificationResult
from services.publisher.channel_errors import ChannelRejected
from services.publisher.notification_channels import NotificationSender
from services.publisher.notification_log import NotificationLog
from services.publisher.notification_message import Notification

log = logging.getLogger(__name__)


class Notifier:
    def __init__(self, senders: list[NotificationSender], sent: NotificationLog) -> None:
        self.senders, self.sent = senders, sent

    def notify(self, notification: Notification) -> list[NotificationResult]:
        """Raises ChannelUnavailable (the bus retries; what was sent stays sent) before anything is half done."""
        results = []
        for sender in self.senders:
            key = (notification.incident_id, notification.state, sender.channel, sender.dry_run)
            if self.sent.was_sent(*key):
                status = "noop"
            else:
                try:
                    sender.send(notification)
                except ChannelRejected as exc:
                    log.warning("%s refused the notification of %s: %s", sender.channel, notification.delivery_id, exc)
                    status = "failed"
                else:
                    self.sent.record(*key, notification.content_digest)
                    status = "sent"
            results.append(
                NotificationResult(
                    channel=sender.channel,
                    status=status,  # type: ignore[arg-type]
                    state=notification.state,
                    target=sender.target,
                    content_digest=notification.content_digest,
                    dry_run=sender.dry_run,
                )
            )
        return results
