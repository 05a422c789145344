// A translator that owns what translation needs, in CTranslate2's Translator shape: it loads one
// model or an ensemble (directories and weights), their vocabularies and an optional shortlist,
// and translates or scores raw text through one TranslationService. `yoke translate`,
// `yoke score-pairs`, `yoke serve` and `import yoke` hold one of these instead of loading models,
// splicing ensembles and attaching shortlists each in its own way.
#pragma once
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "decode/batching_queue.h"
#include "decode/force_decode.h"
#include "store/model_ensemble.h"
#include "decode/shortlist.h"
#include "decode/translation_service.h"

namespace yoke {

// Where a Translator's models come from.
struct TranslatorSource {
  std::vector<std::string> dirs;  // one model directory, or an ensemble's
  std::vector<double> weights;    // one per directory, or empty: equal (normalised to sum 1)
  std::string checkpoint;         // "" : each directory's rule (store/model_store.h)
  std::string device = "cpu";
  std::string shortlist;          // a subword translation table (`yoke pair --table`), or "": the whole vocabulary
  int shortlist_k = 50, shortlist_frequent = 100;  // decode/shortlist.h's per_source and frequent
  int batch_tokens = 0;           // 0: decode/batched_decoding.h's default for the first model's device and the search
};

// Pairs of raw text scored by forced decoding, with the target lines as read (for printing).
struct ScoredPairs {
  std::vector<std::string> target_lines;
  std::vector<ForcedScore> scores;
};

class Translator {
 public:
  // Loads the models (InputError naming the directory or vocabulary file that does not fit).
  explicit Translator(const TranslatorSource& source);
  // From models already loaded (a door that read the first model to learn its task); the shortlist
  // and batch size from `source`, whose dirs, weights, checkpoint and device are not read.
  Translator(LoadedEnsemble models, const TranslatorSource& source);
  Translator(const Translator&) = delete;
  Translator& operator=(const Translator&) = delete;

  // TranslationService::translate with this translator's shortlist (when it has one).
  std::vector<Translation> translate(TranslationRequest request, const TranslationProgress& progress = {},
                                     TranslationTimings* timings = nullptr) const;

  // log p(target | source) of each pair of lines (the names are for errors: a file, or "sources"),
  // as the ensemble's search would score them; `nbest_list`: the targets are an n-best list
  // (`INDEX ||| TEXT ||| …`), each scored with source line INDEX. on_batch(done) counts pairs, of
  // targets.size(). Throws InputError when the counts
  // differ or a sentence is longer than the model's positions, naming the list and the line.
  ScoredPairs score(const std::vector<std::string>& sources, const std::string& sources_name,
                    const std::vector<std::string>& targets, const std::string& targets_name, double lenpen,
                    bool nbest_list = false, const std::function<void(size_t)>& on_batch = {}) const;

  // Requests from many callers decoded together (`yoke serve`): start_queue once, then submit from
  // any thread. With one worker, the queue holds `model_mutex` while it decodes, so other users of
  // the models take turns (decode/batching_queue.h). limits.batch_tokens 0: this translator's.
  void start_queue(BatchingLimits limits, std::mutex& model_mutex, std::function<void(size_t, size_t)> on_batch = {});
  // Encodes now (TooLong and InputError are thrown here, as is QueueFull), decodes in the queue;
  // get() on the future gives one Translation per line, in order.
  std::future<std::vector<Translation>> submit(const TranslationRequest& request) const;
  size_t queued_sentences() const { return queue_ ? queue_->queued_sentences() : 0; }
  void stop_queue() {  // decodes what is queued; later submits throw QueueFull
    if (queue_) queue_->stop();
  }

  const TranslationService& service() const { return *service_; }
  const LoadedModel& first() const { return models_.first(); }
  const Ensemble& ensemble() const { return models_.ensemble; }
  std::string checkpoints() const { return models_.checkpoints(); }
  // What multiplies the weights, for logs: " (int8 weights; products in …)" or " (fp32 products in …)"
  // (model/int8_kernel.h, fp32_kernel.h); "" where nothing was chosen (a GPU, no oneDNN).
  std::string products() const;

 private:
  LoadedEnsemble models_;
  std::optional<Shortlist> shortlist_;
  // The server's queue and forced decoding: the size given, else the device's default (greedy's:
  // their batches mix searches or have none). translate() leaves 0 to the service, per search.
  int batch_tokens_;
  std::optional<TranslationService> service_;  // made once the models are loaded (it points at them)
  std::unique_ptr<BatchingQueue> queue_;       // after start_queue
};

}  // namespace yoke
