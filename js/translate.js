#!/usr/bin/env node
// Translates lines with an exported ONNX model in onnxruntime-node, as `yoke translate` would:
//   node js/translate.js MODEL_DIR [--beam N] [--lenpen X] [--max-len-a A] [--max-len-b B]
//        [--batch N] [--threads N] [--ids] [--encode] [--input FILE] [--ort-profile PREFIX] < src.txt > hyp.txt
// --ids: subword ids in and out; --encode: print the source ids (SentencePiece in JS) and stop;
// --ort-profile: ORT's per-operator timing of both sessions into PREFIX-*.json.
'use strict';
const fs = require('fs');
const { loadModel } = require('./node_model.js');

const USAGE = `usage: node js/translate.js MODEL_DIR [options] < input > output

Translates one sentence per line with a model exported by \`yoke export --format onnx\`, in
onnxruntime-node, as \`yoke translate\` would (the same greedy and beam outputs).

options:
  --beam N          beam size; 1 = greedy (default 5)
  --lenpen A        length penalty: score = log p / length^A (default 1)
  --max-len-a A     at most A·source_length + B target tokens (default 1.2)
  --max-len-b B     see --max-len-a (default 10)
  --batch N         sentences per batch (default 64)
  --threads N       ONNX Runtime threads (default 1)
  --input FILE      read FILE instead of standard input
  --ids             subword ids in and out instead of text
  --encode          print the source ids (SentencePiece in JS) and stop
  --ort-profile P   ONNX Runtime's per-operator timing of both sessions into P-*.json
  -h, --help        this text
`;

// A number for an option, or an error naming it (parseInt of "x" is NaN, which would decode nothing).
function number(name, text, whole) {
  const v = whole ? Number.parseInt(text, 10) : Number.parseFloat(text);
  if (text === undefined || !Number.isFinite(v) || (whole && String(v) !== String(text).trim()))
    throw new Error(`${name} expects ${whole ? 'a whole number' : 'a number'}, got '${text}'`);
  return v;
}

function parseArgs(argv) {
  const o = { beam: 5, lenpen: 1.0, max_len_a: 1.2, max_len_b: 10, batch: 64, threads: 1, ids: false, encode: false };
  const rest = [];
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i], value = () => argv[++i];
    if (a === '-h' || a === '--help') { o.help = true; return o; }
    else if (a === '--beam') o.beam = number(a, value(), true);
    else if (a === '--lenpen') o.lenpen = number(a, value(), false);
    else if (a === '--max-len-a') o.max_len_a = number(a, value(), false);
    else if (a === '--max-len-b') o.max_len_b = number(a, value(), true);
    else if (a === '--batch') o.batch = number(a, value(), true);
    else if (a === '--threads') o.threads = number(a, value(), true);
    else if (a === '--input') o.input = value();
    else if (a === '--ort-profile') o.profile = value();
    else if (a === '--ids') o.ids = true;
    else if (a === '--encode') o.encode = true;
    else if (a.startsWith('-')) throw new Error('unknown option ' + a + ' (see --help)');
    else rest.push(a);
  }
  if (rest.length !== 1) throw new Error('give one MODEL_DIR (see --help)');
  if (o.beam < 1 || o.batch < 1 || o.threads < 1) throw new Error('--beam, --batch and --threads must be at least 1');
  o.model = rest[0];
  return o;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.help) { process.stdout.write(USAGE); return; }
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
