"""compare(): a backend run over a store and compared output by output, and the
``compare`` command that runs it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from compare_helpers import GOOD, RAISES, WRONG_SHAPE, cli
from onnx import ModelProto

from onnx_arrow import compare as cmp
from onnx_arrow.corpus import Store


def _by_case(df: pd.DataFrame) -> dict[str, list[str]]:
    return df.groupby("case")["status"].agg(list).to_dict()


def test_reference_backend_statuses(store: Store) -> None:
    df = cmp.compare(store).to_pandas()
    assert list(df.columns) == list(cmp.COMPARE_COLUMNS)
    statuses = _by_case(df)
    for name in GOOD:
        assert set(statuses[f"node/{name}"]) == {"match"}, name
    assert statuses[f"node/{RAISES}"] == ["error"]
    assert statuses[f"node/{WRONG_SHAPE}"] == ["shape_mismatch"]
    error = df.loc[df.case == f"node/{RAISES}", "error"].iloc[0]
    assert error.startswith("RuntimeImplementationError: ")
    wrong = df[df.case == f"node/{WRONG_SHAPE}"].iloc[0]
    assert wrong.shape_expected == (2,)
    assert wrong.shape_actual == (2, 1)
    # a row per expected output, with the op types of the model
    add = df[df.case == "node/test_add"].iloc[0]
    assert add.op_types == ("Add",)
    assert (add["name"], add.dtype_expected, add.dtype_actual) == ("sum", "FLOAT", "FLOAT")
    assert add.max_abs_error == 0.0
    assert add.n_beyond_tolerance == 0


def test_zeros_backend_gives_the_known_difference(store: Store) -> None:
    def zeros(model: ModelProto, inputs: dict[str, Any]) -> list[Any]:
        return [np.zeros_like(v) for v in inputs.values()][:1]

    df = cmp.compare(store, zeros, cases=["test_abs"]).to_pandas()
    (row,) = df.itertuples()
    expected = next(v.to_numpy() for v in store.values("node/test_abs") if v.io == "output")
    assert row.status == "mismatch"
    assert row.max_abs_error == pytest.approx(float(np.abs(expected).max()))
    assert row.max_rel_error == pytest.approx(1.0)
    assert row.n_beyond_tolerance == int(np.count_nonzero(expected))


def test_cli_compare_and_run(store: Store, tmp_path: Path) -> None:
    code, out, _ = cli("compare", str(store.path), "--case", "test_abs", "--case", "test_add")
    assert code == 0
    assert re.search(r"^outputs +2$", out, re.M)
    assert re.search(r"^  match +2$", out, re.M)
    report = tmp_path / "report.parquet"
    code, out, _ = cli("compare", str(store.path), "--out", str(report))
    assert code == 1
    assert "Scatter" in out
    assert "Range" in out or "Sub" in out
    assert pd.read_parquet(report).shape[0] == len(GOOD) + 2
    actual = tmp_path / "actual.parquet"
    code, out, _ = cli("run", str(store.path), str(actual))
    assert code == 0
    assert re.search(r"^backend errors +1 data sets$", out, re.M)
    code, _, err = cli("run", str(store.path), str(actual))
    assert code == 1
    assert "exists; pass --force" in err
    code, out2, _ = cli("compare", str(store.path), "--actual", str(actual))
    assert code == 1
    assert out2.splitlines()[:9] == cli("compare", str(store.path))[1].splitlines()[:9]
    code, _, err = cli("compare", str(store.path), "--case", "nope")
    assert code == 1
    assert "no case matches" in err
    code, _, _ = cli("compare", str(store.path), "--actual", "x", "--backend", "reference")
    assert code == 2
    code, _, _ = cli("compare", str(store.path), "--rtol", "-1")
    assert code == 2
