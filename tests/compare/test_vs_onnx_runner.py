"""compare's verdicts agree with onnx's own backend test runner, case by case.

The whole node suite is compared by ``python benchmarks/vs_onnx_runner.py``; here a
sample of it (every 25th case, and the ones either side gets wrong).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from onnx_arrow import compare as cmp
from onnx_arrow.corpus import NodeSuiteSource, Store, write_store

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
import vs_onnx_runner as runner  # the benchmark's own functions

#: Cases the reference evaluator or onnxruntime gets wrong, or one side cannot compare.
HARD = {
    "node/test_scatter_without_axis",  # the reference evaluator has no Scatter: error
    "node/test_range_float_type_positive_delta_expanded",  # shape [2, 1] for [2]
    "node/test_loop16_seq_none",  # onnx's runner fails on its own comparison (len())
    "node/test_gru_batchwise",  # onnxruntime: batchwise layout not supported
    "node/test_cast_FLOAT_to_STRING",  # onnxruntime and the reference print floats apart
}
#: onnx's runner raises TypeError comparing this case's sequence output (a runner
#: limitation, measured with onnx 1.23.2); compare compares it, and it matches.
RUNNER_CANNOT_COMPARE = {"node/test_loop16_seq_none"}


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Store:
    cases = list(NodeSuiteSource())
    chosen = [c for i, c in enumerate(cases) if i % 25 == 0 or c.name in HARD]
    chosen = [c for c in chosen if "bernoulli" not in c.name]  # random: not comparable
    path = tmp_path_factory.mktemp("runner") / "sample.parquet"
    write_store(chosen, path)
    return Store(path)


@pytest.mark.parametrize("backend", ["reference", "onnxruntime"])
def test_compare_passes_exactly_the_cases_onnxs_runner_passes(sample: Store, backend: str) -> None:
    if backend == "onnxruntime":
        pytest.importorskip("onnxruntime")
        import onnxruntime.backend as theirs
    else:
        theirs = runner.ReferenceBackend
    outcomes = runner.runner_outcomes(theirs, sample.cases())
    assert set(outcomes) == set(sample.cases())
    # the same backend on both sides: onnxruntime through its onnx backend interface (the
    # built-in onnxruntime backend also feeds the types numpy lacks: see test_ort.py)
    ours = "onnxruntime.backend" if backend == "onnxruntime" else backend
    verdict = runner.verdicts(cmp.compare(sample, ours).to_pandas())
    differ = {c for c in outcomes if (outcomes[c] == "pass") != (verdict[c] == "match")}
    assert differ == RUNNER_CANNOT_COMPARE
    assert outcomes["node/test_loop16_seq_none"] == "error"
    # a backend that raises is an error on both sides, a wrong value a failure on both
    for case, outcome in outcomes.items():
        if case in RUNNER_CANNOT_COMPARE:
            continue
        if outcome == "error":
            assert verdict[case] == "error", case
        if outcome == "fail":
            assert verdict[case] in ("mismatch", "shape_mismatch", "dtype_mismatch"), case
    table = runner.confusion(outcomes, verdict)
    assert int(table.to_numpy().sum()) == len(outcomes)


def test_onnxruntime_logs_only_when_asked(sample: Store) -> None:
    pytest.importorskip("onnxruntime")
    args = [sys.executable, "-m", "onnx_arrow", "compare", str(sample.path)]
    args += ["--backend", "onnxruntime", "--case", "test_gru_batchwise"]
    quiet = subprocess.run(args, capture_output=True, text=True, check=False)
    assert quiet.returncode == 1, quiet.stderr
    assert "onnxruntime:" not in quiet.stderr
    assert quiet.stderr == ""
    loud = subprocess.run([*args, "--backend-logs"], capture_output=True, text=True, check=False)
    assert loud.returncode == 1
    assert "onnxruntime:" in loud.stderr  # its own log lines: [E:onnxruntime:, ...]
