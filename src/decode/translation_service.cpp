#include "decode/translation_service.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "decode/batched_decoding.h"

namespace yoke {

namespace {

constexpr double kNotComputed = std::numeric_limits<double>::quiet_NaN();

std::vector<std::string> pieces_of(const Vocab& vocab, const std::vector<int>& ids) {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (int id : ids) out.push_back(vocab.piece(id));
  return out;
}

}  // namespace

void set_decoding_values(TranslationRequest& request, const DecodingValues& values) {
  request.search.beam = int(values.beam);
  request.nbest = int(values.nbest);
  request.search.lenpen = values.lenpen;
  request.search.max_len_a = values.max_len_a;
  request.search.max_len_b = int(values.max_len_b);
}

TooLong::TooLong(const std::string& what, size_t i, size_t n, size_t l)
    : InputError(what + "[" + std::to_string(i) + "] has " + std::to_string(n) + " subwords; at most " + std::to_string(l)),
      index(i), subwords(n), limit(l) {}

TranslationService::TranslationService(Ensemble model, const Vocab& src_vocab, const Vocab& tgt_vocab, int batch_tokens)
    : model_(std::move(model)), src_vocab_(src_vocab), tgt_vocab_(tgt_vocab),
      batch_tokens_(std::max(0, batch_tokens)) {}

size_t TranslationService::max_source_subwords() const {
  int64_t positions = model_.first().spec().max_positions;
  for (const auto* m : model_.models) positions = std::min(positions, m->spec().max_positions);
  return size_t(positions) - 1;
}

EncodedRequest TranslationService::encode(const TranslationRequest& request) const {
  const size_t n = request.lines.size();
  if (!request.prefixes.empty() && request.prefixes.size() != n)
    throw InputError(std::to_string(request.prefixes.size()) + " prefixes for " + std::to_string(n) + " lines: one per line");
  if (!request.constraints.empty() && request.constraints.size() != n)
    throw InputError(std::to_string(request.constraints.size()) + " constraint lists for " + std::to_string(n) +
                     " lines: one per line");
  if (request.nbest < 1 || request.nbest > std::max(1, request.search.beam))
    throw InputError("nbest must be between 1 and the beam (" + std::to_string(request.search.beam) + ")");
  EncodedRequest enc;
  enc.search = request.search;
  enc.nbest = request.nbest;
  enc.first_index = request.first_index;
  size_t limit = max_source_subwords();
  if (request.max_source_subwords > 0) limit = std::min(limit, request.max_source_subwords);
  const bool refuse = request.long_lines == LongLines::refuse;
  enc.sources.resize(n);
  enc.source_subwords.resize(n);
  for (size_t i = 0; i < n; ++i) {
    enc.sources[i] = src_vocab_.encode(request.lines[i]);
    enc.source_subwords[i] = enc.sources[i].size();
    if (enc.sources[i].size() > limit) {  // positions beyond the table do not exist
      if (refuse) throw TooLong("text", i, enc.sources[i].size(), limit);
      enc.sources[i].resize(limit);
    }
  }
  const bool guided = !request.prefixes.empty() || !request.constraints.empty();
  if (guided) enc.guides.resize(n);
  for (size_t i = 0; i < n && !request.prefixes.empty(); ++i) {
    enc.guides[i].prefix = tgt_vocab_.encode(request.prefixes[i]);
    // The target has as many positions as the source: a prefix that fills them leaves no room.
    if (refuse && enc.guides[i].prefix.size() >= limit)
      throw TooLong("prefix", i, enc.guides[i].prefix.size(), limit - 1);
  }
  for (size_t i = 0; i < n && !request.constraints.empty(); ++i)
    for (const auto& phrase : request.constraints[i]) enc.guides[i].constraints.push_back(tgt_vocab_.encode(phrase));
  enc.plain = request.nbest == 1 && !request.scores && !request.search.alignment &&
              request.search.sampling == Sampling::none && !guided;
  return enc;
}

Translation TranslationService::finish(const EncodedRequest& enc, size_t i, const std::vector<Hypothesis>& hypotheses) const {
  Translation t;
  t.index = enc.first_index + i;
  t.source = enc.sources[i];
  t.source_subwords = enc.source_subwords[i];
  t.prefix_subwords = enc.guides.empty() ? 0 : enc.guides[i].prefix.size();
  for (const auto& h : hypotheses)
    t.hypotheses.push_back({tgt_vocab_.decode(h.tokens), h.tokens, h.score, h.log_prob, h.attention});
  return t;
}

std::vector<Translation> TranslationService::translate(const TranslationRequest& request,
                                                       const TranslationProgress& progress,
                                                       TranslationTimings* timings) const {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  const EncodedRequest enc = encode(request);
  const auto encoded = Clock::now();
  const size_t n = enc.sources.size();
  std::vector<Translation> out(n);
  std::vector<bool> ready(n, false);
  size_t next = 0;  // the first translation not handed to on_ready yet
  auto deliver = [&](const std::vector<size_t>& done) {
    for (size_t i : done) ready[i] = true;
    for (; next < n && ready[next]; ++next)
      if (progress.on_ready) progress.on_ready(out[next]);
  };
  if (enc.plain) {
    translate_ids(model_, enc.sources, enc.search, batch_tokens_, progress.on_batch,
                  [&](const std::vector<size_t>& done, const std::vector<std::vector<int>>& best) {
                    for (size_t i : done) out[i] = finish(enc, i, {Hypothesis{best[i], kNotComputed, kNotComputed, {}}});
                    deliver(done);
                  });
  } else {
    TranslateExtras extras;
    extras.guides = enc.guides.empty() ? nullptr : &enc.guides;
    extras.first_index = enc.first_index;
    extras.on_results = [&](const std::vector<size_t>& done, const std::vector<std::vector<Hypothesis>>& lists) {
      for (size_t i : done) out[i] = finish(enc, i, lists[i]);
      deliver(done);
    };
    translate_ids_nbest(model_, enc.sources, enc.search, enc.nbest, batch_tokens_, progress.on_batch, extras);
  }
  if (timings) {
    *timings = {};
    timings->encode_seconds = std::chrono::duration<double>(encoded - started).count();
    timings->search_seconds = std::chrono::duration<double>(Clock::now() - encoded).count();
    timings->sentences = n;
    for (size_t i = 0; i < n; ++i) {
      timings->source_subwords += enc.sources[i].size();
      if (!out[i].hypotheses.empty()) timings->target_subwords += out[i].hypotheses.front().tokens.size();
    }
  }
  return out;
}

std::string TranslationService::alignment_text(const Translation& t, const TranslatedHypothesis& h,
                                               const AlignmentFormat& format) const {
  return format_alignment(h.attention, pieces_of(src_vocab_, t.source), pieces_of(tgt_vocab_, h.tokens), format);
}

}  // namespace yoke
