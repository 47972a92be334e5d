"""Backends with onnx's backend interface, written for the tests, importable by spec
(``backend_helpers:EvaluatorBackend``) wherever ``tests`` is on the path."""

from __future__ import annotations

from typing import Any

from onnx import ModelProto
from onnx.backend.base import Backend, BackendRep
from onnx.reference import ReferenceEvaluator

from onnx_arrow.compare.feeds import strings_as_str


class EvaluatorRep(BackendRep):
    """onnx's ReferenceEvaluator on one model, fed a list of inputs in graph order."""

    def __init__(self, model: ModelProto) -> None:
        self.evaluator = ReferenceEvaluator(model)
        self.names = [i.name for i in model.graph.input]
        self.runs = 0

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        self.runs += 1
        feed = dict(zip(self.names, (strings_as_str(v) for v in inputs), strict=False))
        return tuple(self.evaluator.run(None, feed))


class EvaluatorBackend(Backend):
    """A ``Backend`` subclass as downstream runtimes write theirs: class methods."""

    prepared = 0

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"

    @classmethod
    def prepare(cls, model: ModelProto, device: str = "CPU", **kwargs: Any) -> EvaluatorRep:
        cls.prepared += 1
        return EvaluatorRep(model)


class InstanceBackend:
    """A backend whose ``prepare`` is an instance method: used through an instance."""

    def __init__(self) -> None:
        self.device = ""

    def prepare(self, model: ModelProto, device: str = "CPU", **kwargs: Any) -> EvaluatorRep:
        self.device = device
        return EvaluatorRep(model)


class FailingBackend(Backend):
    """Its ``prepare`` refuses every model, as a runtime without the model's operators."""

    @classmethod
    def prepare(cls, model: ModelProto, device: str = "CPU", **kwargs: Any) -> BackendRep:
        raise NotImplementedError(f"no kernel for {model.graph.node[0].op_type}")


class NoRunBackend(Backend):
    """Its ``prepare`` gives something that has no ``run``."""

    @classmethod
    def prepare(cls, model: ModelProto, device: str = "CPU", **kwargs: Any) -> Any:
        return object()


class GpuOnlyBackend(EvaluatorBackend):
    """Supports no CPU."""

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CUDA"


#: Not a backend: neither ``prepare`` nor a call.
NOT_A_BACKEND = 42
