#include "service/translator.h"

#include <stdexcept>

#include "decode/batched_decoding.h"
#include "decode/scoring_pairs.h"
#include "model/fp32_kernel.h"
#include "model/int8_kernel.h"

namespace yoke {

Translator::Translator(const TranslatorSource& source)
    : Translator(load_ensemble(source.dirs, source.checkpoint, source.device, source.weights), source) {}

Translator::Translator(LoadedEnsemble models, const TranslatorSource& source)
    : models_(std::move(models)),
      batch_tokens_(source.batch_tokens > 0 ? source.batch_tokens : default_batch_tokens(*models_.first().model)) {
  if (!source.shortlist.empty())
    shortlist_.emplace(Shortlist::from_table(source.shortlist, first().src_vocab, first().tgt_vocab, source.shortlist_k,
                                             source.shortlist_frequent));
  // The service's 0 picks each search's default (beam search's batches are larger on the CPU).
  service_.emplace(models_.ensemble, first().src_vocab, first().tgt_vocab, source.batch_tokens);
}

std::vector<Translation> Translator::translate(TranslationRequest request, const TranslationProgress& progress,
                                               TranslationTimings* timings) const {
  if (shortlist_) request.search.shortlist = &*shortlist_;
  return service_->translate(request, progress, timings);
}

void Translator::start_queue(BatchingLimits limits, std::mutex& model_mutex, std::function<void(size_t, size_t)> on_batch) {
  if (limits.batch_tokens == 0) limits.batch_tokens = batch_tokens_;
  queue_ = std::make_unique<BatchingQueue>(models_.ensemble, model_mutex, limits, std::move(on_batch));
}

std::future<std::vector<Translation>> Translator::submit(const TranslationRequest& request) const {
  if (!queue_) throw std::logic_error("Translator::submit before start_queue");
  TranslationRequest r = request;
  if (shortlist_) r.search.shortlist = &*shortlist_;
  auto encoded = std::make_shared<EncodedRequest>(service_->encode(r));
  auto decoded = queue_->submit(encoded->sources, encoded->search, encoded->nbest, encoded->guides);
  // Deferred: the caller's get() waits for the queue, then turns the ids back into text.
  return std::async(std::launch::deferred, [this, encoded, decoded = std::move(decoded)]() mutable {
    const auto lists = decoded.get();
    std::vector<Translation> out;
    out.reserve(lists.size());
    for (size_t i = 0; i < lists.size(); ++i) out.push_back(service_->finish(*encoded, i, lists[i]));
    return out;
  });
}

ScoredPairs Translator::score(const std::vector<std::string>& sources, const std::string& sources_name,
                              const std::vector<std::string>& targets, const std::string& targets_name, double lenpen,
                              bool nbest_list, const std::function<void(size_t)>& on_batch) const {
  const auto& m = first();
  auto pairs = nbest_list ? encode_nbest_pairs(*m.model, m.src_vocab, m.tgt_vocab, sources, sources_name, targets, targets_name)
                          : encode_scoring_pairs(*m.model, m.src_vocab, m.tgt_vocab, sources, sources_name, targets,
                                                 targets_name);
  ScoredPairs out;
  out.scores = force_decode(models_.ensemble, pairs.sources, pairs.targets, lenpen, batch_tokens_, on_batch);
  out.target_lines = std::move(pairs.target_lines);
  return out;
}

std::string Translator::products() const {
  if (first().int8) {
    const std::string reason = int8_kernel_reason();
    return " (int8 weights; products in " + (reason.empty() ? "fp32 (no int8 kernel in this LibTorch, or on a GPU)" : reason) + ")";
  }
  const std::string reason = fp32_kernel_reason();
  return reason.empty() ? "" : " (fp32 products in " + reason + ")";
}

}  // namespace yoke
