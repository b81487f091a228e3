"""Per-family diagnostics plug-ins: what ``diag probe | selftest | stats`` can do with each
driver."""
