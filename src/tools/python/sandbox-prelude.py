"""Runs once in each sandbox, before the submitted code.

The real limits are enforced in JavaScript (seal-worker.ts); these make the refusals read as Python errors
a program, and a model, can understand, instead of a crashed interpreter or a misleading errno.
"""

import errno
import json
import os
import posix
import socket
import sys
import traceback

import pyodide
from pyodide.code import eval_code_async

CODE_FILENAME = "<code>"
MAX_RESULT_CHARS = 64 * 1024


def _refuse_processes(*args, **kwargs):
    raise PermissionError(errno.EPERM, "running host commands is disabled in the Python sandbox")


def _refuse_network(*args, **kwargs):
    raise PermissionError(errno.EACCES, "network access is disabled in the Python sandbox")


os.system = posix.system = _refuse_processes
socket.socket.connect = socket.socket.connect_ex = _refuse_network
socket.create_connection = _refuse_network
for _name in [name for name in sys.modules if name == "pyodide.http" or name.startswith("pyodide.http.")] + ["pyodide.http"]:
    sys.modules[_name] = None
pyodide.__dict__.pop("http", None)
# Emscripten puts the path of the worker's script here: nothing of the host's layout is the program's business.
os.environ.pop("_", None)


async def _agentgate_run(source):
    """Runs the code as __main__; returns JSON: the repr of its last expression, or the traceback of its failure."""
    # Line by line: what a program stopped at the time limit printed is still read (the buffers die with it).
    sys.stdout.reconfigure(line_buffering=True)
    sys.stderr.reconfigure(line_buffering=True)
    try:
        value = await eval_code_async(source, {"__name__": "__main__"}, filename=CODE_FILENAME)
        result = None if value is None else _capped(repr(value))
        return json.dumps({"result": result, "error": None})
    except SystemExit as exit:
        return json.dumps({"result": None, "error": None if exit.code in (None, 0) else _format_error(exit)})
    except BaseException as error:
        return json.dumps({"result": None, "error": _format_error(error)})
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


def _format_error(error):
    """The traceback from the submitted code down: the frames of Pyodide's runner above it say nothing to the caller."""
    frames = error.__traceback__
    while frames is not None and frames.tb_frame.f_code.co_filename != CODE_FILENAME:
        frames = frames.tb_next
    return _capped("".join(traceback.format_exception(type(error), error, frames)))


def _capped(text):
    return text if len(text) <= MAX_RESULT_CHARS else text[:MAX_RESULT_CHARS] + f"…truncated ({len(text) - MAX_RESULT_CHARS} more characters)"
