"""What of the broker gets into the archive (issue 26: nothing on the broker is trusted):
``admission`` the one gate, ``quarantine`` what was refused, ``options`` their bounds."""
