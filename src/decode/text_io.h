// The text front door of translation: raw lines → source ids (the model's source vocabulary, its
// length limit) → target ids → detokenized text. `yoke translate`, the experiment runner and the
// server all come in here, so that a line is encoded, limited and written back the same way.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "decode/search.h"
#include "text/vocab.h"
#include "util/error.h"

namespace yoke {

// The most source subwords the model has positions for (one goes to eos).
size_t max_source_subwords(const Transformer& model);

// Source ids of raw text lines; a line longer than `limit` subwords (default: the model's
// positions) is cut to fit and its 0-based index goes to `cut` (when given).
std::vector<std::vector<int>> encode_sources(const Transformer& model, const Vocab& src_vocab,
                                             const std::vector<std::string>& lines, std::vector<size_t>* cut = nullptr);

// A source line over the limit, when lines may not be cut (a server request).
struct SourceTooLong : InputError {
  SourceTooLong(size_t index, size_t subwords, size_t limit);
  size_t index, subwords, limit;
};
// As encode_sources, refusing (SourceTooLong for the first such line) instead of cutting.
std::vector<std::vector<int>> encode_sources_within(const Vocab& src_vocab, const std::vector<std::string>& lines,
                                                    size_t limit);

// A hypothesis as text, with its score.
struct TextHypothesis {
  std::string text;
  double score;
};
std::vector<TextHypothesis> as_text(const Vocab& tgt_vocab, const std::vector<Hypothesis>& list);

// Raw text in, detokenized text out, in input order (sources cut as encode_sources does).
std::vector<std::string> translate_text(Transformer& model, const Vocab& src_vocab, const Vocab& tgt_vocab,
                                        const std::vector<std::string>& lines, const SearchOptions& opts,
                                        int max_batch_tokens, const std::function<void(size_t)>& on_batch = {},
                                        std::vector<size_t>* cut = nullptr);

}  // namespace yoke
