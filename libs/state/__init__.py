"""The services' small state (processed inputs, delivery attempts, dead-letter log, policy pins, notification
log): one port, ``StateDatabase``, with two adapters: SQLite files under the home (the embedded default) and one
PostgreSQL database shared by every replica (``MODELGUARD_STATE_URL``)."""
