#include "python/model_facade.h"

#include <algorithm>
#include <sstream>

#include "compat/torch.h"
#include "config/decoding_options.h"
#include "config/key_ranges.h"

#include "decode/force_decode.h"
#include "decode/scoring_pairs.h"
#include "decode/translation_service.h"
#include "service/translator.h"
#include "decode/batched_decoding.h"
#include "lm/generate.h"
#include "lm/prompt.h"
#include "store/model_store.h"
#include "util/error.h"

namespace yoke::python {

void set_threads(int threads) {
  if (threads < 1) throw InputError("threads must be at least 1, got " + std::to_string(threads));
  compat::set_compute_threads(threads);
}

struct Model::Loaded {
  std::unique_ptr<Translator> translator;  // a translation model (service/translator.h), as `yoke translate` holds it
  LoadedModel lm;                          // a language model
  const LoadedModel& first() const { return translator ? translator->first() : lm; }
};

Model::Model(const std::string& dir, const std::string& checkpoint, const std::string& device)
    : m_(std::make_unique<Loaded>()) {
  LoadedModel loaded = load_model(dir, checkpoint, device);
  if (loaded.config.task == Task::translate)
    m_->translator = std::make_unique<Translator>(ensemble_of_one(std::move(loaded)), TranslatorSource{});
  else
    m_->lm = std::move(loaded);
}
Model::Model(const std::vector<std::string>& dirs, const std::vector<double>& weights, const std::string& checkpoint,
             const std::string& device, int batch_tokens)
    : m_(std::make_unique<Loaded>()) {
  if (batch_tokens < 0) throw InputError("batch_tokens must be positive, or 0 for the default");
  TranslatorSource source;
  source.dirs = dirs;
  source.weights = weights;
  source.checkpoint = checkpoint;
  source.device = device;
  source.batch_tokens = batch_tokens;
  m_->translator = std::make_unique<Translator>(source);
}
Model::~Model() = default;

std::string Model::task() const { return name_of(m_->first().config.task); }
std::string Model::config_json() const { return m_->first().config.to_json().dump(); }
std::string Model::checkpoint() const { return m_->first().checkpoint; }

namespace {

// The ranges `yoke translate` and `yoke score-pairs` check (config/key_ranges.h), with their message,
// raised as ValueError: a beam of 0 or a NaN length penalty is refused, not decoded into nothing.
void check_in_range(const char* key, double v) {
  const KeyRange* range = key_range(key);
  if (!in_range(*range, v)) {
    std::ostringstream got;
    got << v;
    throw InputError(std::string(key) + " must be " + range_text(*range) + ", got " + got.str());
  }
}

}  // namespace

std::vector<std::vector<TextHypothesis>> Model::translate(const std::vector<std::string>& lines, const SearchSettings& s) {
  if (!m_->translator) throw InputError("translate needs a translation model; this is a language model");
  DecodingValues d;
  for (const auto& [name, value] : s) set_decoding_option(d, name, value);
  check_decoding_values(d);
  TranslationRequest request;  // lines too long are cut to the model's positions, silently
  request.lines = lines;
  set_decoding_values(request, d);
  request.scores = true;
  std::vector<std::vector<TextHypothesis>> out;
  for (const auto& t : m_->translator->translate(request)) {
    out.emplace_back();
    for (const auto& h : t.hypotheses) out.back().push_back({h.text, h.score, h.log_prob});
  }
  return out;
}

std::vector<PairScore> Model::score(const std::vector<std::string>& sources, const std::vector<std::string>& targets,
                                    double lenpen) {
  if (!m_->translator) throw InputError("score needs a translation model; this is a language model");
  check_in_range("lenpen", lenpen);
  // As `yoke score-pairs` encodes them: the counts must agree, and a pair too long for the model
  // is refused (a score of a cut sentence would mislead), naming the list and the 1-based line.
  const ScoredPairs scored = m_->translator->score(sources, "sources", targets, "targets", lenpen);
  std::vector<PairScore> out;
  for (const auto& s : scored.scores) out.push_back({s.token_log_probs, s.log_prob, s.score});
  return out;
}

std::string Model::generate(const std::string& prompt, const SamplingSettings& s) {
  const LoadedModel& m = m_->lm;
  if (m_->translator) throw InputError("generate needs a language model (task = lm)");
  SamplingOptions o;
  o.max_tokens = s.max_tokens;
  o.temperature = s.temperature;
  o.top_k = s.top_k;
  o.top_p = s.top_p;
  o.seed = s.seed;
  const Prompt start = make_prompt(m.tgt_vocab, m.config.lm_block > 0, m.model->spec().max_positions, prompt);
  return prompt_and_continuation(m.tgt_vocab, start, generate_tokens(*m.model, start.context, o));
}

std::map<std::string, Matrix> Model::word_matrices() const {
  at::NoGradGuard no_grad;
  const WordEmbeddings& e = *m_->first().model->embeddings;
  std::map<std::string, Matrix> out;
  auto put = [&](const char* role, const WordMatrix* w) {
    if (!w) return;
    const auto t = w->full().detach().to(at::kCPU, at::kFloat).contiguous();
    Matrix mat{std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel()), t.size(0), t.size(1)};
    out[role] = std::move(mat);
  };
  put("source", e.source());
  put("target", &e.target());
  put("output", &e.output());
  return out;
}

}  // namespace yoke::python
