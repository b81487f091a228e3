"""The lab: simulated tables and a simulated dealer for the demo, benches and tests; the service
never imports it."""
