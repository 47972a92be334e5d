"""Ending the JVM pyspark starts: stopping a session leaves it running until this
process exits, and the suite fails on a process a test leaves behind."""

from __future__ import annotations

import subprocess
import sys


def end_spark_jvm() -> None:
    """Stop the active Spark session, if any, and end the JVM its gateway started."""
    if "pyspark" not in sys.modules:
        return
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is not None:
        session.stop()
    gateway = SparkContext._gateway
    if gateway is None:
        return
    gateway.shutdown()
    proc = getattr(gateway, "proc", None)
    if proc is not None:  # the JVM ends when its stdin closes
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    SparkContext._gateway = SparkContext._jvm = None
