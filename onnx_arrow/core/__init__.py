"""The core: dtype table, tensors, containers, Arrow types (onnx, numpy, pyarrow only)."""
