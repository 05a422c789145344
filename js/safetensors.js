// safetensors files (Hugging Face's layout, as src/store/safetensors.h writes it) in node, for
// the tests' exchange with yoke: F32 and I64 tensors only.
'use strict';
const fs = require('fs');

function readSafetensors(file) {
  const buf = fs.readFileSync(file);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
  const metadata = header.__metadata__ || {};
  delete header.__metadata__;
  const tensors = {};
  for (const [name, e] of Object.entries(header)) {
    const [begin, end] = e.data_offsets;
    const bytes = buf.subarray(8 + n + begin, 8 + n + end);
    const copy = new Uint8Array(bytes).buffer;  // aligned for the typed array
    const data = e.dtype === 'F32' ? new Float32Array(copy) : e.dtype === 'I64' ? new BigInt64Array(copy) : null;
    if (!data) throw new Error(`${file}: tensor ${name} has dtype ${e.dtype}; only F32 and I64 are read here`);
    tensors[name] = { data, dims: e.shape };
  }
  return { tensors, metadata };
}

function writeSafetensors(file, tensors) {
  const header = {}, parts = [];
  let offset = 0;
  for (const name of Object.keys(tensors).sort()) {
    const { data, dims } = tensors[name];
    const dtype = data instanceof Float32Array ? 'F32' : 'I64';
    const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    header[name] = { dtype, shape: dims, data_offsets: [offset, offset + bytes.length] };
    parts.push(bytes);
    offset += bytes.length;
  }
  let text = JSON.stringify(header);
  text += ' '.repeat((8 - (Buffer.byteLength(text) % 8)) % 8);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(Buffer.byteLength(text)));
  fs.writeFileSync(file, Buffer.concat([length, Buffer.from(text), ...parts]));
}

module.exports = { readSafetensors, writeSafetensors };
