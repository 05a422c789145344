// Translation as a service, in CTranslate2's Translator shape: a request of raw lines (with search
// options, prefixes, constraints and a policy for lines too long) goes in; one Translation per
// line comes out, in input order, decoded in batches spread over workers (decode/batched_decoding.h),
// with the call's timings.
// `yoke translate`, `yoke serve`, `import yoke` and the experiment runner are adapters over it,
// so a line is encoded, limited, searched and written back the same way wherever it comes from.
// Translator::submit (service/translator.h) batches across requests (decode/batching_queue.h): it
// calls encode(), decodes the ids in its queue and hands the hypotheses back to finish().
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "config/decoding_options.h"
#include "decode/search.h"
#include "decode/word_alignment.h"
#include "text/vocab.h"
#include "util/error.h"

namespace yoke {

// What happens to a source line with more subwords than the limit (or a prefix that fills the
// target's positions): `cut` keeps its first subwords and says so in the Translation (the CLI
// warns, the runner and Python translate what fits); `refuse` throws TooLong (the server's 413).
enum class LongLines { cut, refuse };

struct TranslationRequest {
  std::vector<std::string> lines;                     // raw text, one sentence each
  std::vector<std::string> prefixes;                  // empty, or one per line: the start of its translation ("": none)
  std::vector<std::vector<std::string>> constraints;  // empty, or one per line: phrases its translation must hold
  SearchOptions search;
  // Hypotheses kept per line, best first (≤ search.beam). With 1 and no scores, alignment,
  // sampling, prefixes or constraints asked for, the plain search runs (greedy or beam), whose
  // translations are the n-best route's first; its Hypothesis scores are not computed (NaN).
  int nbest = 1;
  bool scores = false;
  LongLines long_lines = LongLines::cut;
  size_t max_source_subwords = 0;  // 0: the model's positions (less eos); more than those is lowered to them
  size_t first_index = 0;          // the input index of lines[0]: a chunk of a stream samples as the whole would
};

// The decoding options of config/decoding_options.h's table (checked there) into a request.
void set_decoding_values(TranslationRequest& request, const DecodingValues& values);

// A line (or its prefix) over the limit under LongLines::refuse.
struct TooLong : InputError {
  TooLong(const std::string& what, size_t index, size_t subwords, size_t limit);
  size_t index, subwords, limit;
};

struct TranslatedHypothesis {
  std::string text;          // detokenized
  std::vector<int> tokens;   // target ids, without eos
  double score = 0;          // what the search ranks by (NaN from the plain search)
  double log_prob = 0;       // log p(tokens + eos | source) (NaN from the plain search)
  std::vector<std::vector<float>> attention;  // with search.alignment: Hypothesis::attention
};

struct Translation {
  size_t index = 0;                              // in the input (first_index + position in the request)
  std::vector<TranslatedHypothesis> hypotheses;  // best first; empty when no hypothesis met the constraints
  std::vector<int> source;                       // the source ids searched (cut to the limit)
  size_t source_subwords = 0;                    // before any cut: more than source.size() when cut
  size_t prefix_subwords = 0;                    // the prefix's subwords; ≥ the limit: nothing follows it
  bool cut() const { return source_subwords > source.size(); }
};

// A request encoded: what the search needs, per line.
struct EncodedRequest {
  std::vector<std::vector<int>> sources;
  std::vector<TargetGuide> guides;   // empty, or one per line
  std::vector<size_t> source_subwords;  // before any cut
  SearchOptions search;
  int nbest = 1;
  bool plain = true;                 // the plain search, without hypotheses' scores
  size_t first_index = 0;
};

// What one translate() call took: wall-clock seconds of its two stages, and what it handled.
struct TranslationTimings {
  double encode_seconds = 0;  // text to ids: sources, prefixes, constraints
  double search_seconds = 0;  // the batched search, and the hypotheses back to text
  size_t sentences = 0, source_subwords = 0;  // source subwords as searched (after any cut)
  size_t target_subwords = 0;                 // of each line's best hypothesis
  double seconds() const { return encode_seconds + search_seconds; }
};

struct TranslationProgress {
  std::function<void(size_t done)> on_batch;  // sentences decoded so far, after each batch
  // Each Translation, in input order, as soon as it and every one before it are done (streaming).
  std::function<void(const Translation&)> on_ready;
};

class TranslationService {
 public:
  // `batch_tokens` 0: default_batch_tokens for each request's search. The models and vocabularies
  // must outlive the service.
  TranslationService(Ensemble model, const Vocab& src_vocab, const Vocab& tgt_vocab, int batch_tokens = 0);

  // Every line translated, in input order, and what it took when `timings` is given. Throws TooLong
  // (LongLines::refuse) or InputError.
  std::vector<Translation> translate(const TranslationRequest& request, const TranslationProgress& progress = {},
                                     TranslationTimings* timings = nullptr) const;

  // The steps of translate(), for a caller that decodes the ids itself (the server's queue).
  EncodedRequest encode(const TranslationRequest& request) const;
  Translation finish(const EncodedRequest& encoded, size_t i, const std::vector<Hypothesis>& hypotheses) const;

  // A hypothesis's word alignment as `yoke translate --alignment` prints it (needs search.alignment).
  std::string alignment_text(const Translation& t, const TranslatedHypothesis& h, const AlignmentFormat& format) const;

  // The most source subwords the model has positions for (one goes to eos); an ensemble's fewest.
  size_t max_source_subwords() const;

 private:
  Ensemble model_;  // pointers to the models and their weights
  const Vocab& src_vocab_;
  const Vocab& tgt_vocab_;
  int batch_tokens_;
};

}  // namespace yoke
