"""What each ``onnx-arrow`` command does once its arguments have parsed: a module per
command, each with ``run(args, out)`` returning the exit status, and their shared
helpers.  Imported only to run a command (they import onnx, ml_dtypes and the store);
the commands' arguments are in the light modules of :mod:`onnx_arrow.cli`.
"""
