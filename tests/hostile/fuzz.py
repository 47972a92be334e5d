"""The long hostile run: random mutations of the real node suite's files and of its store.

Not part of the default suite.  Run::

    PYTHONPATH=.:tests python -m hostile.fuzz --minutes 10 [--seed 0] [--batch 200]

Each round takes ``--batch`` value files of the node suite the installed onnx builds,
each mutated at random (bytes flipped, set to 0x00/0x80/0xff, cut, a span duplicated
or dropped), and reads each as its model declares it; and mutates the bytes of the
suite's store (built once) in as many ways, reading every value of each.  Every case
runs through :mod:`hostile.harness` (a child process under the memory cap, a timeout)
and must end cleanly: read, or refused with a project error that names the file.
Prints the outcomes counted by family at the end; exits 1 if any case did otherwise,
listing them (their inputs are kept under ``--keep`` to reproduce).
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from hostile.harness import Case, Expect, Outcome, run_cases


def _mutate(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if not out:
            break
        how = rng.randrange(5)
        i = rng.randrange(len(out))
        if how == 0:
            out[i] ^= 1 << rng.randrange(8)
        elif how == 1:
            out[i] = rng.choice((0x00, 0x80, 0xFF, 0x7F))
        elif how == 2:
            del out[i:]
        elif how == 3:
            j = min(len(out), i + rng.randint(1, 16))
            out[i:i] = out[i:j]
        else:
            del out[i : i + rng.randint(1, 16)]
    return bytes(out)


def _suite(root: Path) -> tuple[list[tuple[str, bytes, Path]], Path]:
    """The node suite as a folder (value files with their models) and as a store."""
    from onnx_arrow.corpus import NodeSuiteSource, Store, write_store
    from onnx_arrow.corpus.tree import write_tree

    store = root / "node.parquet"
    write_store(NodeSuiteSource(), store)
    folder = root / "node-suite"
    write_tree(Store(store).files(), folder)
    values = []
    for model in sorted(folder.rglob("model.onnx")):
        for pb in sorted(model.parent.glob("test_data_set_*/*.pb")):
            io, _, index = pb.stem.partition("_")
            values.append((f"{io}:{index}", pb.read_bytes(), model))
    return values, store


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--keep", type=Path, default=None, help="keep the inputs here")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    root = Path(args.keep or tempfile.mkdtemp(prefix="hostile-fuzz-"))
    root.mkdir(parents=True, exist_ok=True)
    values, store = _suite(root)
    store_bytes = store.read_bytes()
    deadline = time.monotonic() + 60 * args.minutes
    total: Counter[tuple[str, str, bool]] = Counter()
    wrong: list[Outcome] = []
    round_ = 0
    while time.monotonic() < deadline:
        round_ += 1
        cases = []
        for k in range(args.batch):
            slot, data, model = rng.choice(values)
            io, index = slot.split(":")
            mutated = _mutate(data, rng)

            def pb(
                root: Path, r=round_, k=k, d=mutated, m=model, io=io, i=int(index)
            ) -> dict[str, Any]:
                path = root / f"round-{r}" / f"{k}" / "input.pb"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(d)
                return {"path": str(path), "model": str(m), "io": io, "index": i}

            cases.append(
                Case(
                    "fuzz-pb", f"{round_}-{k}", "read_pb", pb, Expect(clean=True, where="input.pb")
                )
            )
        for k in range(max(1, args.batch // 10)):
            mutated = _mutate(store_bytes, rng)

            def forged(root: Path, r=round_, k=k, d=mutated) -> dict[str, Any]:
                path = root / f"round-{r}" / f"store-{k}.parquet"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(d)
                return {"path": str(path), "op": "values"}

            cases.append(Case("fuzz-store", f"{round_}-{k}", "store", forged, Expect(clean=True)))
        outcomes = run_cases(cases, root)
        for o in outcomes.values():
            total[(o.case.family, o.verdict, o.problem is None)] += 1
            if o.problem:
                wrong.append(o)
        if not args.keep:
            shutil.rmtree(root / f"round-{round_}", ignore_errors=True)
        print(f"round {round_}: {len(cases)} cases, {len(wrong)} wrong so far", flush=True)
    for (family, verdict, good), n in sorted(total.items()):
        print(f"{family:<12} {verdict:<40} {'as expected' if good else 'WRONG':<12} {n}")
    for o in wrong:
        print(f"WRONG {o.case.id}: {o.problem}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
