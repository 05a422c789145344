// Perplexity of a language model on text, with the scoring stated: sentence by sentence, or over
// the text as one stream in windows of `block` tokens that start every `stride` tokens (each
// token is predicted once; with stride < block every window after the first scores only its
// last `stride` tokens, which then see at least block − stride tokens of context).
#pragma once
#include <string>
#include <vector>

#include "model/transformer.h"
#include "text/vocab.h"

namespace yoke {

struct Perplexity {
  double nll = 0;          // summed negative log-likelihood, nats
  int64_t subwords = 0;    // predicted tokens: the subwords of every line plus one end-of-line (eos) each
  int64_t words = 0;       // whitespace-separated words of every line plus one end-of-line each
  int64_t lines = 0;
  int64_t block = 0, stride = 0;  // the scoring used (block 0: sentences)
  // Every prediction, in the order scored: the target id and its −log p in nats (as the model's
  // float log-softmax gives it). nll is their sum, added in this order in double precision, so
  // anything that adds them up again in the same order (lm/frequency_bands.h) gets the same nll.
  std::vector<int32_t> targets;
  std::vector<float> token_nll;
  // Per line, in the text's order: the summed NLL of its predictions (its end-of-line included),
  // and how many subwords and words it predicts (eval/sentence_nll_file.h keeps them).
  std::vector<double> line_nll;
  std::vector<int64_t> line_subwords, line_words;
  double per_subword() const;     // exp(nll / subwords)
  double per_word() const;        // exp(nll / words): the same likelihood spread over words
  std::string scoring() const;    // the scoring in words, for logs and reports
};

// `lines`: subword ids of each line (no bos/eos); `words`: whitespace words of each line.
Perplexity lm_perplexity(Transformer& model, const std::vector<std::vector<int>>& lines,
                         const std::vector<int64_t>& words, int64_t block, int64_t stride, int64_t max_tokens = 4096);

// Raw text lines: encoded with `vocab`; words are the whitespace-separated tokens of each line.
Perplexity text_perplexity(Transformer& model, const Vocab& vocab, const std::vector<std::string>& lines, int64_t block,
                           int64_t stride, int64_t max_tokens = 4096);

}  // namespace yoke
