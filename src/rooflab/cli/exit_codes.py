"""Exit codes, one meaning each, so a CI script can tell a regression from a broken call
(docs/json.md, "In CI"). 70 is sysexits' EX_SOFTWARE; 130 is 128 + SIGINT.

A module of their own, with no imports, so that cli/main.py has them before its try
without importing cli/common.py (rich's console, the file helpers): Ctrl-C while those
import is then one line too."""

EXIT_OK = 0
EXIT_REGRESSION = 1      # a gate failed: `compare --fail-if-slower` (a kernel or the whole
#                          run got slower), `report --fail-below` (a kernel below PCT % of roof)
EXIT_USAGE = 2           # a user error: bad option, bad file, unknown hardware
EXIT_INTERNAL = 70       # a bug in rooflab (an exception it did not expect): a traceback
EXIT_IOERR = 74          # stdout could not be written (a full disk; closed at start): EX_IOERR
EXIT_INTERRUPTED = 130   # Ctrl-C / SIGINT; nothing was written
