#include "decode/text_io.h"

#include "decode/translator.h"

namespace yoke {

size_t max_source_subwords(const Transformer& model) { return size_t(model.spec().max_positions) - 1; }

std::vector<std::vector<int>> encode_sources(const Transformer& model, const Vocab& src_vocab,
                                             const std::vector<std::string>& lines, std::vector<size_t>* cut) {
  std::vector<std::vector<int>> sources(lines.size());
  const size_t limit = max_source_subwords(model);
  for (size_t i = 0; i < lines.size(); ++i) {
    sources[i] = src_vocab.encode(lines[i]);
    if (sources[i].size() > limit) {  // positions beyond the table do not exist
      sources[i].resize(limit);
      if (cut) cut->push_back(i);
    }
  }
  return sources;
}

SourceTooLong::SourceTooLong(size_t i, size_t n, size_t l)
    : InputError("text[" + std::to_string(i) + "] has " + std::to_string(n) + " subwords; at most " + std::to_string(l)),
      index(i), subwords(n), limit(l) {}

std::vector<std::vector<int>> encode_sources_within(const Vocab& src_vocab, const std::vector<std::string>& lines,
                                                    size_t limit) {
  std::vector<std::vector<int>> sources(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    sources[i] = src_vocab.encode(lines[i]);
    if (sources[i].size() > limit) throw SourceTooLong(i, sources[i].size(), limit);
  }
  return sources;
}

std::vector<TextHypothesis> as_text(const Vocab& tgt_vocab, const std::vector<Hypothesis>& list) {
  std::vector<TextHypothesis> out;
  out.reserve(list.size());
  for (const auto& h : list) out.push_back({tgt_vocab.decode(h.tokens), h.score});
  return out;
}

std::vector<std::string> translate_text(Transformer& model, const Vocab& src_vocab, const Vocab& tgt_vocab,
                                        const std::vector<std::string>& lines, const SearchOptions& opts,
                                        int max_batch_tokens, const std::function<void(size_t)>& on_batch,
                                        std::vector<size_t>* cut) {
  auto ids = translate_ids(model, encode_sources(model, src_vocab, lines, cut), opts, max_batch_tokens, on_batch);
  std::vector<std::string> out(lines.size());
  for (size_t i = 0; i < ids.size(); ++i) out[i] = tgt_vocab.decode(ids[i]);
  return out;
}

}  // namespace yoke
