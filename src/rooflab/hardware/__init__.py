"""Hardware: the nominal catalog, host detection, and MachineProfile files."""
