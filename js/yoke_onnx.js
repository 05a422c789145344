// A yoke model exported to ONNX (python/yoke_onnx.py) in ONNX Runtime, with yoke's greedy and beam
// search (src/decode/search.cpp) written out step for step so that the outputs are the same:
//   - at most trunc(max_len_a · (source subwords + eos) + max_len_b) tokens, clamped to
//     [1, max_positions − 1]; sources are cut to max_positions − 1 subwords;
//   - pad and bos are never emitted;
//   - greedy takes the argmax of the logits and stops at eos or at the limit (a token, not eos);
//   - beam search adds float32 log-probabilities, keeps the 2k best candidates of the k·V, lets an
//     eos end a hypothesis only when it ranks among the k best (fairseq's rule), forces eos at the
//     limit, stops a sentence once k hypotheses ended, and ranks ended ones by
//     log p / (tokens + 1)^lenpen, the first ended winning a tie.
// The same file runs in node (require) and in the browser (window.YokeOnnx); `ort` is
// onnxruntime-node's or onnxruntime-web's module, handed in.
(function (root) {
  'use strict';

  const NEG_INF = -Infinity;

  // Rows `index` of a tensor along dim 0 (every input and state holds one hypothesis per row).
  function gatherRows(ort, t, index) {
    const rowSize = t.dims.slice(1).reduce((a, b) => a * b, 1);
    const out = new t.data.constructor(index.length * rowSize);
    index.forEach((r, i) => out.set(t.data.subarray(r * rowSize, (r + 1) * rowSize), i * rowSize));
    return new ort.Tensor(t.type, out, [index.length, ...t.dims.slice(1)]);
  }

  function emptyState(ort, shape, batch) {
    const dims = shape.map((s) => (s === 'B' ? batch : s === 'T' ? 0 : s));
    return new ort.Tensor('float32', new Float32Array(dims.reduce((a, b) => a * b, 1)), dims);
  }

  class Translator {
    // settings: onnx.json; encoder, decoder: ort.InferenceSession.
    constructor(ort, settings, encoder, decoder) {
      this.ort = ort;
      this.settings = settings;
      this.encoder = encoder;
      this.decoder = decoder;
    }

    // Source id lists (without eos) -> the batch tensor [n, S]: ids + eos, right-padded with pad.
    sourceTensor(sources) {
      const s = this.settings;
      const width = Math.max(...sources.map((x) => x.length)) + 1;
      const data = new BigInt64Array(sources.length * width);
      sources.forEach((x, i) => {
        x.forEach((id, j) => { data[i * width + j] = BigInt(id); });
        data[i * width + x.length] = BigInt(s.eos);
      });
      return new this.ort.Tensor('int64', data, [sources.length, width]);
    }

    clip(sources) {
      return sources.map((x) => x.slice(0, this.settings.max_positions - 1));
    }

    maxLengths(sources, opts) {
      return sources.map((x) => Math.min(Math.max(Math.trunc(opts.max_len_a * (x.length + 1) + opts.max_len_b), 1),
        this.settings.max_positions - 1));
    }

    // The encoder's outputs for the batch: {src_mask, cross_k.I, cross_v.I}, each row repeated `copies` times.
    async encode(sources, copies) {
      const out = await this.encoder.run({ src: this.sourceTensor(sources) });
      if (copies === 1) return out;
      const index = [];
      sources.forEach((_, i) => { for (let b = 0; b < copies; ++b) index.push(i); });
      const repeated = {};
      for (const name of Object.keys(out)) repeated[name] = gatherRows(this.ort, out[name], index);
      return repeated;
    }

    // One decoder step: feeds = encoder outputs + states; returns {logits, log_probs, states}.
    async step(tokens, position, memory, states) {
      const feeds = {
        tokens: new this.ort.Tensor('int64', BigInt64Array.from(tokens, (t) => BigInt(t)), [tokens.length]),
        position: new this.ort.Tensor('int64', BigInt64Array.from([BigInt(position)]), []),
        ...memory, ...states,
      };
      const out = await this.decoder.run(feeds);
      const next = {};
      for (const st of this.settings.states) next[st.name] = out['new_' + st.name];
      return { logits: out.logits, log_probs: out.log_probs, states: next };
    }

    initialStates(rows) {
      const states = {};
      for (const st of this.settings.states) states[st.name] = emptyState(this.ort, st.shape, rows);
      return states;
    }

    select(memory, states, index) {
      const m = {}, s = {};
      for (const k of Object.keys(memory)) m[k] = gatherRows(this.ort, memory[k], index);
      for (const k of Object.keys(states)) s[k] = gatherRows(this.ort, states[k], index);
      return [m, s];
    }

    // Teacher-forced logits [n, T, V] of target prefixes (each starting with bos), step by step
    // through the cache: what the tests compare with yoke's.
    async forcedLogits(sourcesWithEos, targets) {
      const n = targets.length, T = Math.max(...targets.map((t) => t.length));
      const srcTensor = new this.ort.Tensor('int64', BigInt64Array.from(sourcesWithEos.flat(), BigInt),
        [n, sourcesWithEos[0].length]);
      let memory = await this.encoder.run({ src: srcTensor });
      let states = this.initialStates(n);
      const V = this.settings.tgt_vocab_size;
      const out = new Float32Array(n * T * V);
      for (let t = 0; t < T; ++t) {
        const r = await this.step(targets.map((x) => x[t] ?? this.settings.pad), t, memory, states);
        states = r.states;
        for (let i = 0; i < n; ++i) out.set(r.logits.data.subarray(i * V, (i + 1) * V), (i * T + t) * V);
      }
      return { data: out, dims: [n, T, V] };
    }

    async greedy(sourcesIn, opts) {
      const s = this.settings, sources = this.clip(sourcesIn);
      if (!sources.length) return [];
      const maxLen = this.maxLengths(sources, opts);
      let memory = await this.encode(sources, 1);
      let states = this.initialStates(sources.length);
      const out = sources.map(() => []);
      let rows = sources.map((_, i) => i), tokens = rows.map(() => s.bos);
      for (let t = 0; rows.length; ++t) {
        const r = await this.step(tokens, t, memory, states);
        const V = r.logits.dims[1], logits = r.logits.data;
        const keep = [], keepRows = [], keepTokens = [];
        rows.forEach((sentence, row) => {
          let best = -1, bestValue = NEG_INF;
          for (let v = 0; v < V; ++v) {
            if (v === s.pad || v === s.bos) continue;
            const x = logits[row * V + v];
            if (best < 0 || x > bestValue) { best = v; bestValue = x; }
          }
          if (best === s.eos || t + 1 >= maxLen[sentence]) {
            if (best !== s.eos) out[sentence].push(best);
            return;
          }
          out[sentence].push(best);
          keep.push(row); keepRows.push(sentence); keepTokens.push(best);
        });
        if (keep.length !== rows.length && keep.length) [memory, states] = this.select(memory, r.states, keep);
        else states = r.states;
        rows = keepRows;
        tokens = keepTokens;
      }
      return out;
    }

    async beam(sourcesIn, opts) {
      const s = this.settings, sources = this.clip(sourcesIn), k = Math.max(1, opts.beam);
      if (!sources.length) return [];
      const maxLen = this.maxLengths(sources, opts);
      let memory = await this.encode(sources, k);
      let states = this.initialStates(sources.length * k);
      const finished = sources.map(() => []);
      let active = sources.map((_, i) => i);
      let hist = Array.from({ length: sources.length * k }, () => []);
      let score = new Float32Array(sources.length * k).fill(NEG_INF);
      for (let i = 0; i < sources.length; ++i) score[i * k] = 0;  // one live hypothesis at the start
      let tokens = new Array(sources.length * k).fill(s.bos);
      for (let t = 0; active.length; ++t) {
        const r = await this.step(tokens, t, memory, states);
        const V = r.log_probs.dims[1], lp = r.log_probs.data;
        const parents = [], nextTokens = [], nextScores = [], nextHist = [], nextActive = [];
        active.forEach((sentence, i) => {
          const atEnd = t >= maxLen[sentence];
          // The 2k best of the sentence's k·V candidates (score + log p, in float32), best first.
          const top = [];  // [value, flat index], kept sorted
          const width = 2 * k;
          for (let b = 0; b < k; ++b) {
            const row = i * k + b, base = row * V, sc = score[row];
            if (sc === NEG_INF) continue;  // every candidate of a dead row is -inf
            for (let v = 0; v < V; ++v) {
              if (v === s.pad || v === s.bos || (atEnd && v !== s.eos)) continue;
              const x = Math.fround(lp[base + v] + sc);
              if (x === NEG_INF) continue;
              if (top.length === width && !(x > top[width - 1][0])) continue;
              let j = top.length;
              if (j === width) top.pop(), j = width - 1;
              while (j > 0 && x > top[j - 1][0]) --j;  // after equal values: the lower index stays first
              top.splice(j, 0, [x, b * V + v]);
            }
          }
          const live = [];
          for (let j = 0; j < top.length && live.length < k; ++j) {
            const [v, idx] = top[j];
            const row = i * k + Math.floor(idx / V), tok = idx % V;
            if (tok === s.eos) {
              if (j < k && finished[sentence].length < k) {
                finished[sentence].push({ tokens: hist[row], logProb: v,
                  score: v / Math.pow(hist[row].length + 1, opts.lenpen) });
              }
            } else {
              live.push([row, tok, v]);
            }
          }
          if (finished[sentence].length >= k || atEnd || !live.length) return;
          nextActive.push(sentence);
          for (let b = 0; b < k; ++b) {
            const c = b < live.length ? live[b] : live[0];  // fewer than k: dead copies of the first
            parents.push(c[0]);
            nextTokens.push(c[1]);
            nextScores.push(b < live.length ? c[2] : NEG_INF);
            nextHist.push([...hist[c[0]], c[1]]);
          }
        });
        if (!nextActive.length) break;
        // A sentence's k rows of encoder output are the same: they move only when sentences leave.
        if (nextActive.length !== active.length) {
          [memory, states] = this.select(memory, r.states, parents);
        } else {
          states = this.select({}, r.states, parents)[1];
        }
        tokens = nextTokens;
        score = Float32Array.from(nextScores);
        hist = nextHist;
        active = nextActive;
      }
      // Best first; among equal scores the one that ended first (a stable sort).
      return finished.map((list) => {
        const sorted = list.map((h, i) => [h, i]).sort((a, b) => b[0].score - a[0].score || a[1] - b[1]);
        return sorted.length ? sorted[0][0].tokens : [];
      });
    }

    async translateIds(sources, opts) {
      return opts.beam <= 1 ? this.greedy(sources, opts) : this.beam(sources, opts);
    }
  }

  // Session options for a decoder that runs one small step at a time: no inter-op pool.
  function sessionOptions(threads) {
    return { intraOpNumThreads: threads || 1, interOpNumThreads: 1, executionMode: 'sequential',
      graphOptimizationLevel: 'all' };
  }

  const api = { Translator, gatherRows, sessionOptions };
  if (typeof module !== 'undefined' && module.exports) module.exports = api;
  else root.YokeOnnx = api;
})(typeof self !== 'undefined' ? self : this);
