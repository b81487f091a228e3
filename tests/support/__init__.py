"""Test helpers shared by several test packages (real brokers, MQTT subscribers, a TCP proxy)."""
