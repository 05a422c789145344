// Loading an exported ONNX directory in node: onnx.json, both sessions and the vocabularies.
'use strict';
const fs = require('fs');
const path = require('path');
const { Translator, sessionOptions } = require('./yoke_onnx.js');
const { SentencePieceBPE } = require('./spm_bpe.js');

function requireOrt() {
  try {
    return require('onnxruntime-node');
  } catch (e) {
    console.error('yoke onnx: cannot load onnxruntime-node (cd js && ONNXRUNTIME_NODE_INSTALL=skip npm ci): ' + e.message);
    process.exit(77);  // the tests' "skipped"
  }
}

// profile: a file prefix for ORT's per-operator profile of each session (JSON), or undefined.
async function loadModel(dir, threads, profile) {
  const ort = requireOrt();
  const settings = JSON.parse(fs.readFileSync(path.join(dir, 'onnx.json'), 'utf8'));
  const options = (name) => ({ ...sessionOptions(threads),
    ...(profile ? { enableProfiling: true, profileFilePrefix: `${profile}-${name}` } : {}) });
  const encoder = await ort.InferenceSession.create(path.join(dir, 'encoder.onnx'), options('encoder'));
  const decoder = await ort.InferenceSession.create(path.join(dir, 'decoder.onnx'), options('decoder'));
  const vocab = (side) => new SentencePieceBPE(JSON.parse(fs.readFileSync(path.join(dir, settings.vocab[side]), 'utf8')));
  return { ort, settings, encoder, decoder, translator: new Translator(ort, settings, encoder, decoder), src: vocab('src'), tgt: vocab('tgt') };
}

module.exports = { loadModel, requireOrt };
