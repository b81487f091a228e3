"""The runner: the only async glue of one table, one job per module.

Device events and commands are funnelled through one queue, so the table sees a single ordered
stream. For each batch: the engine decides it → the events and their conclusions are journaled
in one commit on the journal's thread → the publisher is woken. Nothing leaves the process
before it is in the journal (contracts §3).

    table     TableRunner: composes the parts below, merges the driver streams into one queue,
              runs the batches; a refused write locks the table
              (tablectl.controller.service.outage)
    state     what the parts share (engine, latches, scan, the outage) and the event queue
    commit    the table's writer: batches and the controller's own records, let out after
              each commit
    batch     a batch decided before its commit, and undone if the commit fails
    restart   replay from the last checkpoint, power_on / power_off, the restart gate
              (the rules: tablectl.controller.service.recovery, .checkpoint)
    commands  cmd/{verb}: caps, the authority's verdict, refusal codes, the verbs, the reply
    ticks     one scheduler for the table's periodic work (betting timer, restart deadline,
              outage probe, refusal window, clock)
    views     what is published retained (state, devices/{id}, status), an outage's lock, and
              where it goes (TableOutputs: the publisher's Outbound)
    latches   the faults latched per device
    records   what the runner journals for the engine's conclusions; untrusted text clipped

None of the parts holds the runner: each is handed the parts it uses.

Everything a runner works with arrives through its constructor; the service builds the
publisher's :class:`~tablectl.controller.mqtt.outbound.Outbound` first, gives it to the runner
as its outputs, and then the publisher with the same outbound and
``on_command=runner.commands.command``
(:func:`tablectl.controller.service.app.open_table`).
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
