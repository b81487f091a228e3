"""The running service: composition (app, host), the table runner, recovery, checkpoints, metrics,
logs, systemd."""
