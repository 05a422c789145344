#!/usr/bin/env node
// Translates lines with an exported ONNX model in onnxruntime-node, as `yoke translate` would:
//   node js/translate.js MODEL_DIR [--beam N] [--lenpen X] [--max-len-a A] [--max-len-b B]
//        [--batch N] [--threads N] [--ids] [--encode] [--input FILE] [--ort-profile PREFIX] < src.txt > hyp.txt
// --ids: subword ids in and out; --encode: print the source ids (SentencePiece in JS) and stop;
// --ort-profile: ORT's per-operator timing of both sessions into PREFIX-*.json.
'use strict';
const fs = require('fs');
const { loadModel } = require('./node_model.js');

function parseArgs(argv) {
  const o = { beam: 5, lenpen: 1.0, max_len_a: 1.2, max_len_b: 10, batch: 64, threads: 1, ids: false, encode: false };
  const rest = [];
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i], value = () => argv[++i];
    if (a === '--beam') o.beam = parseInt(value(), 10);
    else if (a === '--lenpen') o.lenpen = parseFloat(value());
    else if (a === '--max-len-a') o.max_len_a = parseFloat(value());
    else if (a === '--max-len-b') o.max_len_b = parseInt(value(), 10);
    else if (a === '--batch') o.batch = parseInt(value(), 10);
    else if (a === '--threads') o.threads = parseInt(value(), 10);
    else if (a === '--input') o.input = value();
    else if (a === '--ort-profile') o.profile = value();
    else if (a === '--ids') o.ids = true;
    else if (a === '--encode') o.encode = true;
    else if (a.startsWith('--')) throw new Error('unknown option ' + a);
    else rest.push(a);
  }
  if (rest.length !== 1) throw new Error('usage: node js/translate.js MODEL_DIR [options] < input');
  o.model = rest[0];
  return o;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const text = fs.readFileSync(o.input || 0, 'utf8');
  const lines = text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  const m = await loadModel(o.model, o.threads, o.profile);
  const sources = lines.map((l) => (o.ids ? l.split(/\s+/).filter(Boolean).map(Number) : m.src.encode(l)));
  const out = new Array(sources.length);
  const started = process.hrtime.bigint();
  if (o.encode) {
    sources.forEach((s, i) => { out[i] = s.join(' '); });
  } else {
    // Batches of sentences of similar length (less padding), as yoke batches; outputs in input order.
    const order = sources.map((_, i) => i).sort((a, b) => sources[a].length - sources[b].length || a - b);
    for (let i = 0; i < order.length; i += o.batch) {
      const rows = order.slice(i, i + o.batch);
      const hyps = await m.translator.translateIds(rows.map((r) => sources[r]), o);
      rows.forEach((r, j) => { out[r] = o.ids ? hyps[j].join(' ') : m.tgt.decode(hyps[j]); });
    }
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  process.stdout.write(out.map((l) => l + '\n').join(''));
  if (o.profile) { m.encoder.endProfiling(); m.decoder.endProfiling(); }
  if (!o.encode) {
    console.error(`translated ${sources.length} sentences in ${seconds.toFixed(2)} s ` +
      `(${(sources.length / seconds).toFixed(2)} sentences/s) with onnxruntime-node, ${o.threads} thread(s)`);
  }
}

main().catch((e) => { console.error('yoke onnx: ' + (e && e.message ? e.message : e)); process.exit(1); });
