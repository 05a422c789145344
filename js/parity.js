#!/usr/bin/env node
// The tests' check (tests/torch/test_onnx.cpp): for each DIR (an ONNX export),
// DIR/onnx_inputs.safetensors (src [B, S] ids + eos right-padded, tgt_in [B, T] starting with bos;
// metadata max_len_a, max_len_b, beam) -> DIR/onnx_outputs.safetensors: logits [B, T, V] of the
// teacher-forced prefixes, step by step through the cache; greedy and beam [B, L]: the searches'
// ids, padded with -1.
'use strict';
const path = require('path');
const { loadModel } = require('./node_model.js');
const { readSafetensors, writeSafetensors } = require('./safetensors.js');

function rows(t) {
  const [n, w] = t.dims, out = [];
  for (let i = 0; i < n; ++i) out.push(Array.from(t.data.subarray(i * w, (i + 1) * w), Number));
  return out;
}

function padded(lists) {
  const width = Math.max(1, ...lists.map((l) => l.length));
  const data = new BigInt64Array(lists.length * width).fill(-1n);
  lists.forEach((l, i) => l.forEach((id, j) => { data[i * width + j] = BigInt(id); }));
  return { data, dims: [lists.length, width] };
}

async function main() {
  for (const dir of process.argv.slice(2)) {
    const m = await loadModel(dir, 1);
    const { tensors, metadata } = readSafetensors(path.join(dir, 'onnx_inputs.safetensors'));
    const src = rows(tensors.src), tgt = rows(tensors.tgt_in);
    const logits = await m.translator.forcedLogits(src, tgt);
    const sources = src.map((r) => r.filter((id) => id !== m.settings.pad && id !== m.settings.eos));
    const opts = { max_len_a: Number(metadata.max_len_a), max_len_b: Number(metadata.max_len_b), lenpen: 1.0 };
    const greedy = await m.translator.greedy(sources, { ...opts, beam: 1 });
    const beam = await m.translator.beam(sources, { ...opts, beam: Number(metadata.beam) });
    writeSafetensors(path.join(dir, 'onnx_outputs.safetensors'), { logits, greedy: padded(greedy), beam: padded(beam) });
  }
}

main().catch((e) => { console.error('yoke onnx parity: ' + (e && e.stack ? e.stack : e)); process.exit(1); });
