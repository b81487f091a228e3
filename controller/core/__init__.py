"""The table's vocabulary: normalized events, outcomes, errors, the strict state machine,
device-event mapping."""
