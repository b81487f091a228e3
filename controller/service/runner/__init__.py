"""The runner: the only async glue of one table, one job per module.

One queue, one ordered stream; per batch the engine decides, events and conclusions are journaled in
one commit, then the publisher is woken; nothing leaves the process before it is journaled
(contracts §3; why one commit: docs/architecture.md "One commit per batch").

    table     TableRunner: merges the driver streams, runs the batches, locks on a refused write
    state     what the parts share (engine, latches, scan, outage) and the event queue
    commit    the table's writer: batches and the controller's own records
    batch     a batch decided before its commit, undone if the commit fails
    restart   replay from the last checkpoint, power_on / power_off, the restart gate
    commands  cmd/{verb}: caps, authority, refusal codes, the verbs, the reply
    ticks     one scheduler for the table's periodic work
    views     retained state, devices/{id}, status, an outage's lock; TableOutputs
    latches   the faults latched per device
    records   what the runner journals for the engine's conclusions

No part holds the runner; each is handed what it uses
(:func:`tablectl.controller.service.app.open_table` wires them).
"""

from tablectl.controller.service.runner.commands import (
    COMMANDS_DISABLED,
    FIELD_TOO_LONG,
    MAX_COMMAND_BYTES,
    MAX_FIELD_CHARS,
)
from tablectl.controller.service.runner.records import output_record
from tablectl.controller.service.runner.table import Listener, TableRunner
from tablectl.controller.service.runner.views import NO_OUTPUTS, NoOutputs, TableOutputs

__all__ = [
    "COMMANDS_DISABLED",
    "FIELD_TOO_LONG",
    "MAX_COMMAND_BYTES",
    "MAX_FIELD_CHARS",
    "NO_OUTPUTS",
    "Listener",
    "NoOutputs",
    "TableOutputs",
    "TableRunner",
    "output_record",
]
