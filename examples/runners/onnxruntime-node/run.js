#!/usr/bin/env node
// onnxruntime-node as an onnx-arrow runner: one data set in the classic layout, run.
//
//   node run.js MODEL INPUTS OUTPUTS
//   onnx-arrow compare STORE --runner 'node run.js {model} {inputs} {outputs}'
//
// Reads MODEL and every INPUTS/input_K.pb (a TensorProto; a file names its input, else
// K is the model's input K), runs the model with onnxruntime-node on the CPU and writes
// output K as OUTPUTS/output_K.pb (a TensorProto with raw_data, or string_data).  Any
// failure is one line on stderr and exit status 1.  onnxruntime-node takes and gives
// tensors only, of the element types in TYPES; a model of an IR version or opset it does
// not read is refused with onnxruntime's own message.
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// ONNX TensorProto.DataType -> [onnxruntime-node tensor type, typed array of its data]
const TYPES = new Map([
  [1, ['float32', Float32Array]],
  [2, ['uint8', Uint8Array]],
  [3, ['int8', Int8Array]],
  [4, ['uint16', Uint16Array]],
  [5, ['int16', Int16Array]],
  [6, ['int32', Int32Array]],
  [7, ['int64', BigInt64Array]],
  [8, ['string', null]],
  [9, ['bool', Uint8Array]],
  [10, ['float16', Uint16Array]], // the bits, as onnxruntime-node takes them without Float16Array
  [11, ['float64', Float64Array]],
  [12, ['uint32', Uint32Array]],
  [13, ['uint64', BigUint64Array]],
  [21, ['uint4', Uint8Array]], // two elements a byte, low nibble first, as raw_data packs them
  [22, ['int4', Uint8Array]],
]);
const ONNX_OF = new Map([...TYPES].map(([code, [type]]) => [type, code]));
const ONNX_NAMES = [
  'UNDEFINED', 'FLOAT', 'UINT8', 'INT8', 'UINT16', 'INT16', 'INT32', 'INT64', 'STRING', 'BOOL',
  'FLOAT16', 'DOUBLE', 'UINT32', 'UINT64', 'COMPLEX64', 'COMPLEX128', 'BFLOAT16',
  'FLOAT8E4M3FN', 'FLOAT8E4M3FNUZ', 'FLOAT8E5M2', 'FLOAT8E5M2FNUZ', 'UINT4', 'INT4',
  'FLOAT4E2M1', 'FLOAT8E8M0', 'UINT2', 'INT2', 'FLOAT6E2M3', 'FLOAT6E3M2',
];
const PACKED4 = new Set([21, 22]);

// --- the protobuf wire format, as far as a TensorProto needs it ----------------------

class Reader {
  constructor(buf, where) {
    this.buf = buf;
    this.pos = 0;
    this.where = where;
  }

  fail(what) {
    throw new Error(`${this.where}: ${what} at byte ${this.pos}; not a TensorProto`);
  }

  varint() {
    let value = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.buf.length) this.fail('a varint runs past the end');
      const b = this.buf[this.pos++];
      value |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return BigInt.asUintN(64, value);
    }
    return this.fail('a varint longer than 10 bytes');
  }

  bytes() {
    const n = Number(this.varint());
    if (this.pos + n > this.buf.length) this.fail(`a field of ${n} bytes runs past the end`);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  skip(wire) {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else this.fail(`wire type ${wire}`);
    if (this.pos > this.buf.length) this.fail('a field runs past the end');
  }

  // a repeated scalar, packed (wire 2) or one element a tag
  repeated(wire, scalar, width, push) {
    if (wire !== 2) {
      push(width ? this.fixed(width) : this.varint());
      return;
    }
    const sub = new Reader(this.bytes(), this.where);
    while (sub.pos < sub.buf.length) push(width ? sub.fixed(width) : sub.varint());
  }

  fixed(width) {
    if (this.pos + width > this.buf.length) this.fail('a fixed-width field runs past the end');
    const view = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, width);
    this.pos += width;
    return view;
  }
}

function decodeTensor(buf, where) {
  const t = { dims: [], dataType: 0, name: '', raw: null, typed: [], strings: [], location: 0 };
  const r = new Reader(buf, where);
  while (r.pos < buf.length) {
    const key = Number(r.varint());
    const field = key >>> 3;
    const wire = key & 7;
    if (field === 1) r.repeated(wire, 'int64', 0, (v) => t.dims.push(BigInt.asIntN(64, v)));
    else if (field === 2) t.dataType = Number(BigInt.asIntN(32, r.varint()));
    else if (field === 4) r.repeated(wire, 'float', 4, (v) => t.typed.push(v.getFloat32(0, true)));
    else if (field === 5) r.repeated(wire, 'int32', 0, (v) => t.typed.push(Number(BigInt.asIntN(32, v))));
    else if (field === 6) t.strings.push(r.bytes());
    else if (field === 7) r.repeated(wire, 'int64', 0, (v) => t.typed.push(BigInt.asIntN(64, v)));
    else if (field === 8) t.name = Buffer.from(r.bytes()).toString('utf8');
    else if (field === 9) t.raw = r.bytes();
    else if (field === 10) r.repeated(wire, 'double', 8, (v) => t.typed.push(v.getFloat64(0, true)));
    else if (field === 11) r.repeated(wire, 'uint64', 0, (v) => t.typed.push(v));
    else if (field === 14) t.location = Number(r.varint());
    else r.skip(wire);
  }
  return t;
}

function onnxName(code) {
  return ONNX_NAMES[code] || `data type ${code}`;
}

function toOrtTensor(t, where) {
  const entry = TYPES.get(t.dataType);
  if (!entry) {
    throw new Error(`${where}: onnxruntime-node takes no ${onnxName(t.dataType)} tensors`);
  }
  if (t.location !== 0) throw new Error(`${where}: external data is not read by this runner`);
  const [type, Array_] = entry;
  const dims = t.dims.map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  let data;
  if (type === 'string') {
    data = t.strings.map((s) => Buffer.from(s).toString('utf8'));
  } else if (t.raw !== null) {
    const copy = new Uint8Array(t.raw); // aligned, and not a view of the file
    if (copy.length % Array_.BYTES_PER_ELEMENT) throw new Error(`${where}: raw_data is cut short`);
    data = new Array_(copy.buffer, 0, copy.length / Array_.BYTES_PER_ELEMENT);
  } else if (PACKED4.has(t.dataType)) {
    data = Uint8Array.from(t.typed); // int32_data holds the packed bytes
  } else {
    data = Array_.from(t.typed, Array_ === BigInt64Array ? BigInt.asIntN.bind(null, 64)
      : Array_ === BigUint64Array ? BigInt.asUintN.bind(null, 64) : undefined);
  }
  const want = PACKED4.has(t.dataType) ? Math.ceil(count / 2) : count;
  if (data.length !== want) {
    throw new Error(`${where}: ${data.length} elements, dims [${dims}] need ${want}`);
  }
  return new ort.Tensor(type, data, dims);
}

function key(field, wire) {
  return varint(BigInt((field << 3) | wire));
}

function varint(value) {
  const out = [];
  let v = BigInt.asUintN(64, BigInt(value));
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Buffer.from(out);
}

function lengthDelimited(field, bytes) {
  return Buffer.concat([key(field, 2), varint(bytes.length), bytes]);
}

function encodeTensor(name, tensor, where) {
  const code = ONNX_OF.get(tensor.type);
  if (code === undefined) throw new Error(`${where}: a ${tensor.type} tensor has no ONNX type here`);
  const parts = tensor.dims.map((d) => Buffer.concat([key(1, 0), varint(d)]));
  parts.push(Buffer.concat([key(2, 0), varint(code)]));
  if (tensor.type === 'string') {
    for (const s of tensor.data) parts.push(lengthDelimited(6, Buffer.from(s, 'utf8')));
  }
  parts.push(lengthDelimited(8, Buffer.from(name, 'utf8')));
  if (tensor.type !== 'string') {
    const data = tensor.data;
    parts.push(lengthDelimited(9, Buffer.from(data.buffer, data.byteOffset, data.byteLength)));
  }
  return Buffer.concat(parts);
}

// --- one data set --------------------------------------------------------------------

function inputFiles(folder) {
  return fs.readdirSync(folder)
    .map((f) => [f, /^input_(\d+)\.pb$/.exec(f)])
    .filter(([, m]) => m)
    .map(([f, m]) => [Number(m[1]), path.join(folder, f)])
    .sort((a, b) => a[0] - b[0]);
}

async function main(argv) {
  if (argv.length !== 3) {
    process.stderr.write('usage: node run.js MODEL INPUTS OUTPUTS\n');
    return 2;
  }
  const [model, inputs, outputs] = argv;
  let session;
  try {
    session = await ort.InferenceSession.create(model, {
      executionProviders: ['cpu'],
      logSeverityLevel: 3,
    });
  } catch (e) {
    // the limits of the version package.json pins, said beside onnxruntime's own words
    const type = /Unsupported data type: (\d+)/.exec(e.message);
    const hint = /IR version|opset/i.test(e.message)
      ? ` (onnxruntime-node ${ort.env.versions.node} reads models up to IR 13, opset 26)`
      : type ? ` (onnxruntime-node takes no ${onnxName(Number(type[1]))} tensors)` : '';
    throw new Error(`${e.message}${hint}`);
  }
  const metadata = new Map(session.inputMetadata.map((m) => [m.name, m]));
  const feeds = {};
  for (const [k, file] of inputFiles(inputs)) {
    const where = path.basename(file);
    const byPosition = session.inputNames[k];
    if (byPosition !== undefined && !metadata.get(byPosition).isTensor) {
      throw new Error(`${where}: input '${byPosition}' is not a tensor; onnxruntime-node takes tensors only`);
    }
    const t = decodeTensor(fs.readFileSync(file), where);
    // the name inside the file first, its number where it names no input (onnxruntime's rule)
    const name = session.inputNames.includes(t.name) ? t.name : byPosition;
    if (name === undefined) throw new Error(`${where}: the model has ${session.inputNames.length} inputs`);
    feeds[name] = toOrtTensor(t, where);
  }
  const results = await session.run(feeds);
  session.outputNames.forEach((name, k) => {
    const where = `output_${k}.pb (${name})`;
    const value = results[name];
    if (!(value instanceof ort.Tensor)) throw new Error(`${where}: not a tensor`);
    fs.writeFileSync(path.join(outputs, `output_${k}.pb`), encodeTensor(name, value, where));
  });
  return 0;
}

main(process.argv.slice(2)).then(
  (status) => process.exit(status),
  (e) => {
    process.stderr.write(`run.js: ${String(e && e.message ? e.message : e).split('\n').join(' ')}\n`);
    process.exit(1);
  },
);
