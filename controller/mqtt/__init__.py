"""The MQTT side: the publisher (outbox drain, retained topics), the topic scheme, command security,
the embedded broker."""
