#!/usr/bin/env node
// A `yoke export --format hf` directory in transformers.js (@huggingface/transformers), as its users
// run it: pipeline('translation', DIR) and AutoModelForSeq2SeqLM, nothing of yoke's own.
//
//   node js/hf_pipeline.js DIR translate [--input FILE] [--max-new-tokens N] [--batch N]
//        greedy translations, one line per input line (stdin without --input)
//   node js/hf_pipeline.js DIR encode [--input FILE]
//        the tokenizer's ids for each line (with the eos the export's post-processor adds)
//   node js/hf_pipeline.js DIR logits IN.safetensors OUT.safetensors
//        the tests' check (tests/torch/test_onnx.cpp): IN holds src [B, S] (ids + eos, right-padded
//        with 0) and tgt_in [B, T] (bos first); OUT gets the model's logits [B, T, V] for them
'use strict';
const fs = require('fs');
const path = require('path');
const { readSafetensors, writeSafetensors } = require('./safetensors.js');

const USAGE = 'usage: node js/hf_pipeline.js DIR translate|encode [--input FILE] [--max-new-tokens N] [--batch N]\n' +
  '       node js/hf_pipeline.js DIR logits IN.safetensors OUT.safetensors';

function fail(message) {
  console.error('hf_pipeline: ' + message);
  process.exit(2);
}

function parse(argv) {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    process.exit(0);
  }
  const [dir, command, ...rest] = argv;
  if (!dir || !['translate', 'encode', 'logits'].includes(command)) fail(USAGE);
  const o = { dir: path.resolve(dir), command, input: null, maxNewTokens: 256, batch: 32, files: [] };
  for (let i = 0; i < rest.length; ++i) {
    const a = rest[i];
    const value = () => {
      if (i + 1 >= rest.length) fail(`${a} needs a value`);
      return rest[++i];
    };
    const count = (name) => {
      const v = value();
      if (!/^[1-9][0-9]*$/.test(v)) fail(`${name} takes a whole number of at least 1, not '${v}'`);
      return Number(v);
    };
    if (a === '--input') o.input = value();
    else if (a === '--max-new-tokens') o.maxNewTokens = count(a);
    else if (a === '--batch') o.batch = count(a);
    else if (a.startsWith('-')) fail(`unknown option ${a}\n${USAGE}`);
    else o.files.push(a);
  }
  if (command === 'logits' && o.files.length !== 2) fail(USAGE);
  return o;
}

function readLines(file) {
  const text = fs.readFileSync(file === null ? 0 : file, 'utf8');
  const lines = text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

async function load(o) {
  const hf = await import('@huggingface/transformers');
  hf.env.allowRemoteModels = false;  // a local directory only: nothing is fetched
  hf.env.localModelPath = path.dirname(o.dir) + path.sep;
  return { hf, id: path.basename(o.dir) };
}

async function main() {
  const o = parse(process.argv.slice(2));
  if (!fs.existsSync(path.join(o.dir, 'config.json'))) fail(`${o.dir}: no config.json (not a --format hf export)`);
  const { hf, id } = await load(o);
  const options = { dtype: 'fp32', device: 'cpu' };
  if (o.command === 'translate') {
    const translator = await hf.pipeline('translation', id, options);
    const lines = readLines(o.input);
    for (let start = 0; start < lines.length; start += o.batch) {
      const out = await translator(lines.slice(start, start + o.batch),
                                   { max_new_tokens: o.maxNewTokens, num_beams: 1, do_sample: false });
      process.stdout.write(out.map((r) => r.translation_text + '\n').join(''));
    }
  } else if (o.command === 'encode') {
    const tokenizer = await hf.AutoTokenizer.from_pretrained(id);
    for (const line of readLines(o.input)) console.log(tokenizer.encode(line).join(' '));
  } else {
    const model = await hf.AutoModelForSeq2SeqLM.from_pretrained(id, options);
    const { tensors } = readSafetensors(o.files[0]);
    const int64 = (t) => new hf.Tensor('int64', t.data, t.dims);
    const src = tensors.src;
    const mask = new BigInt64Array(src.data.length);
    for (let i = 0; i < mask.length; ++i) mask[i] = src.data[i] === 0n ? 0n : 1n;
    const out = await model({ input_ids: int64(src), attention_mask: new hf.Tensor('int64', mask, src.dims),
                              decoder_input_ids: int64(tensors.tgt_in) });
    writeSafetensors(o.files[1], { logits: { data: out.logits.data, dims: out.logits.dims } });
  }
}

main().catch((e) => { console.error('hf_pipeline: ' + (e && e.stack ? e.stack : e)); process.exit(1); });
