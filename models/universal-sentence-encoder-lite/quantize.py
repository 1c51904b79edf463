"""Writes the dynamically quantized (int8) copy of model.onnx.

    /usr/bin/python3 quantize.py model.onnx model-int8.onnx [--weights u8|s8|s8r] [--per-tensor] [--no-embeddings]

Needs only `onnx` and `numpy`. Every MatMul whose right operand is a constant becomes
DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul(a_scale, b_scale), the shape onnxruntime's
graph optimiser fuses into one DynamicQuantizeMatMul (so the work is MLAS's integer GEMM, and
the activation is quantized per call, per tensor). The weights get one scale per output column.
The embedding table is stored as int8 rows with a scale per row and dequantized after the
lookup, so only the looked-up rows are ever float.

Weights: `u8` (the default) is unsigned with a zero point per column. On x86 without VNNI the
u8 x s8 kernel adds pairs of products in 16 bits and can saturate on full 8-bit signed weights;
the u8 x u8 kernel widens first and cannot, and on this AVX-512 VNNI machine it was as fast and as
close to fp32 as `s8`. `s8` is signed [-127, 127], `s8r` signed 7-bit [-63, 63] (no saturation
either, but further from fp32). docs/decisions.md has the numbers.
The output is deterministic: the same input and options give the same bytes.
"""

import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def quantize_columns(w, kind, per_tensor):
    """int weights, float scales [N] (or [1]), zero points (None when symmetric) for w [K, N]."""
    if kind in ("s8", "s8r"):
        qmax = 127 if kind == "s8" else 63
        amax = np.abs(w).max() if per_tensor else np.abs(w).max(axis=0)
        scale = np.maximum(np.atleast_1d(amax), 1e-12).astype(np.float32) / qmax
        q = np.clip(np.rint(w / scale), -qmax, qmax).astype(np.int8)
        return q, scale, None
    lo = np.minimum(w.min() if per_tensor else w.min(axis=0), 0)
    hi = np.maximum(w.max() if per_tensor else w.max(axis=0), 0)
    scale = np.maximum(np.atleast_1d(hi - lo), 1e-12).astype(np.float32) / 255
    zero = np.clip(np.rint(-np.atleast_1d(lo) / scale), 0, 255).astype(np.uint8)
    q = np.clip(np.rint(w / scale) + zero, 0, 255).astype(np.uint8)
    return q, scale, zero


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("source")
    parser.add_argument("target")
    parser.add_argument("--weights", choices=["s8", "s8r", "u8"], default="u8")
    parser.add_argument("--per-tensor", action="store_true")
    parser.add_argument("--no-embeddings", action="store_true")
    args = parser.parse_args()

    model = onnx.load(args.source)
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    uses = {}
    for node in graph.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1

    added_inits, nodes, dropped = [], [], set()
    for node in graph.node:
        weight = node.input[1] if node.op_type == "MatMul" else None
        if weight in inits and uses[weight] == 1 and inits[weight].data_type == TensorProto.FLOAT and len(inits[weight].dims) == 2:
            w = numpy_helper.to_array(inits[weight])
            q, scale, zero = quantize_columns(w, args.weights, args.per_tensor)
            p = node.name or node.output[0]
            added_inits += [numpy_helper.from_array(q, f"{p}/q_weight"), numpy_helper.from_array(scale, f"{p}/q_weight_scale")]
            mm_inputs = [f"{p}/q_x", f"{p}/q_weight", f"{p}/q_x_zero"]
            if zero is not None:
                added_inits.append(numpy_helper.from_array(zero, f"{p}/q_weight_zero"))
                mm_inputs.append(f"{p}/q_weight_zero")
            dropped.add(weight)
            # One DynamicQuantizeLinear per MatMul: the fusion wants its three outputs used by one node.
            nodes += [
                helper.make_node("DynamicQuantizeLinear", [node.input[0]], [f"{p}/q_x", f"{p}/q_x_scale", f"{p}/q_x_zero"], name=f"{p}/quant"),
                helper.make_node("MatMulInteger", mm_inputs, [f"{p}/q_int"], name=f"{p}/int"),
                helper.make_node("Cast", [f"{p}/q_int"], [f"{p}/q_float"], name=f"{p}/cast", to=TensorProto.FLOAT),
                # The activation's scale comes first: the fusion reads Mul's inputs as (A scale, B scale).
                helper.make_node("Mul", [f"{p}/q_x_scale", f"{p}/q_weight_scale"], [f"{p}/q_scale"], name=f"{p}/scale"),
                helper.make_node("Mul", [f"{p}/q_float", f"{p}/q_scale"], list(node.output), name=f"{p}/rescale"),
            ]
        elif node.op_type == "Gather" and not args.no_embeddings and node.input[0] in inits and uses[node.input[0]] == 1:
            table = numpy_helper.to_array(inits[node.input[0]])
            p = node.name or node.output[0]
            scale = np.maximum(np.abs(table).max(axis=1, keepdims=True), 1e-12).astype(np.float32) / 127
            q = np.clip(np.rint(table / scale), -127, 127).astype(np.int8)
            added_inits += [numpy_helper.from_array(q, f"{p}/q_table"), numpy_helper.from_array(scale, f"{p}/q_table_scale")]
            dropped.add(node.input[0])
            axis = [a for a in node.attribute if a.name == "axis"]
            nodes += [
                helper.make_node("Gather", [f"{p}/q_table", node.input[1]], [f"{p}/q_rows"], name=f"{p}/rows", axis=0),
                helper.make_node("Gather", [f"{p}/q_table_scale", node.input[1]], [f"{p}/q_row_scales"], name=f"{p}/row_scales", axis=0),
                helper.make_node("Cast", [f"{p}/q_rows"], [f"{p}/q_rows_float"], name=f"{p}/cast", to=TensorProto.FLOAT),
                helper.make_node("Mul", [f"{p}/q_rows_float", f"{p}/q_row_scales"], list(node.output), name=f"{p}/rescale"),
            ]
            assert not axis or axis[0].i == 0
        else:
            nodes.append(node)

    del graph.node[:]
    graph.node.extend(nodes)
    kept = [t for t in graph.initializer if t.name not in dropped]
    del graph.initializer[:]
    graph.initializer.extend(kept + added_inits)
    kept_info = [v for v in graph.value_info if v.name not in dropped]
    del graph.value_info[:]
    graph.value_info.extend(kept_info)
    model.producer_name = "cairn quantize.py"
    onnx.checker.check_model(model)
    onnx.save(model, args.target)


if __name__ == "__main__":
    main()
