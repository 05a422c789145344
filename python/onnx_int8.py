#!/usr/bin/env python3
"""ONNX Runtime's dynamic int8 quantization of an exported model, written with python3-onnx alone.

    python3 python/onnx_int8.py ONNX_DIR OUT_DIR     # ONNX_DIR: what `yoke export --format onnx` wrote

onnxruntime.quantization.quantize_dynamic is Python-only and ships with the onnxruntime wheel,
which Debian does not package (nor PyPI reachable here), so this does what it does for MatMul:
every MatMul whose second input is a weight (an initializer W [K, N]) becomes

    DynamicQuantizeLinear(A) -> A_q (uint8), A_scale, A_zero_point      (per tensor, at run time)
    MatMulInteger(A_q, W_q, A_zero_point, 0)                             (int32; W_q int8, symmetric)
    Cast(float) · (A_scale · W_scale)                                    (W_scale per column, fp32)

the QOperator form quantize_dynamic writes (uint8 activations, int8 weights, per-channel), which
ORT's optimizer fuses into MatMulIntegerToFloat. Embedding lookups (Gather), norms, biases and the
convolutions' kernels stay fp32, as in `yoke quantize`.
"""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def quantize_graph(model):
    graph = model.graph
    weights = {init.name: init for init in graph.initializer}
    consumers = {}
    for node in graph.node:
        for name in node.input:
            consumers[name] = consumers.get(name, 0) + 1
    nodes, added, done = [], [], 0
    for node in graph.node:
        w = weights.get(node.input[1]) if node.op_type == "MatMul" and len(node.input) == 2 else None
        if w is None or len(w.dims) != 2:
            nodes.append(node)
            continue
        W = numpy_helper.to_array(w).astype(np.float32)
        scale = np.maximum(np.abs(W).max(axis=0), 1e-12) / 127.0          # per output column
        Wq = np.clip(np.round(W / scale), -127, 127).astype(np.int8)
        p = f"{node.name or node.output[0]}_int8"
        added += [numpy_helper.from_array(Wq, p + "_W"), numpy_helper.from_array(scale.astype(np.float32), p + "_Wscale"),
                  numpy_helper.from_array(np.zeros(W.shape[1], np.int8), p + "_Wzero")]
        nodes += [
            helper.make_node("DynamicQuantizeLinear", [node.input[0]], [p + "_A", p + "_Ascale", p + "_Azero"], name=p + "_quant"),
            helper.make_node("MatMulInteger", [p + "_A", p + "_W", p + "_Azero", p + "_Wzero"], [p + "_int32"], name=p + "_matmul"),
            helper.make_node("Cast", [p + "_int32"], [p + "_float"], to=TensorProto.FLOAT, name=p + "_cast"),
            helper.make_node("Mul", [p + "_Ascale", p + "_Wscale"], [p + "_scale"], name=p + "_scales"),
            helper.make_node("Mul", [p + "_float", p + "_scale"], [node.output[0]], name=p + "_dequant"),
        ]
        consumers[w.name] -= 1
        done += 1
    del graph.node[:]
    graph.node.extend(nodes)
    # Weights no node reads any more (each was read by its MatMul only) leave the file.
    kept = [init for init in graph.initializer if consumers.get(init.name, 0) > 0]
    del graph.initializer[:]
    graph.initializer.extend(kept + added)
    return done


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, out = sys.argv[1:]
    if os.path.exists(os.path.join(out, "decoder.onnx")):
        sys.exit(f"onnx_int8: {out} already holds an ONNX model; give another OUT_DIR")
    shutil.copytree(src, out, dirs_exist_ok=True)
    for f in ("encoder.onnx", "decoder.onnx"):
        model = onnx.load(os.path.join(src, f))
        n = quantize_graph(model)
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(out, f))
        print(f"onnx_int8: {f}: {n} MatMul weights to int8", file=sys.stderr)


if __name__ == "__main__":
    main()
