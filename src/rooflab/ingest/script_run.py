"""Old home of the user-script runner, kept so `rooflab.ingest.script_run` imports still work.

The runner lives in `bench/script_run.py` (layer 5), where both `bench/user_script.py` and
`ingest/torch_run.py` import it without going up a layer; import from there.
"""

# Re-exported for outside users of the old module path.
from ..bench.script_run import check_script, run_as_main, script_error  # noqa: F401
