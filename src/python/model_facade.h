// What `import yoke` offers, in plain C++ types: a trained model loaded once, translation (beam,
// n-best, scores), scores of given pairs, generation from a language model, and the word
// matrices for analysis. The pybind11 module (src/python/yoke_module.cpp) wraps this header only:
// it holds no LibTorch type, so the module compiles without LibTorch's or Python's tensor headers.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace yoke::python {

struct TextHypothesis {
  std::string text;
  double score = 0;     // log_prob / (subwords + 1)^lenpen: what the beam ranks by
  double log_prob = 0;  // log p(translation + eos | source)
};

struct PairScore {
  std::vector<float> token_log_probs;  // one per target subword, then eos
  double log_prob = 0, score = 0;
};

struct Matrix {  // row-major [rows, cols]
  std::vector<float> values;
  int64_t rows = 0, cols = 0;
};

// beam, nbest, lenpen, max_len_a, max_len_b by name (config/decoding_options.h): as Python passed
// them, checked by Model::translate against the table every front door reads.
using SearchSettings = std::vector<std::pair<std::string, double>>;

struct SamplingSettings {
  int max_tokens = 50;
  double temperature = 1.0, top_p = 1.0;
  int top_k = 0;
  uint64_t seed = 1;
};

// CPU threads for LibTorch's and OpenBLAS's products (InputError below 1).
void set_threads(int threads);

class Model {
 public:
  // A model directory (`yoke train`'s save_dir, an int8 or an exported one); device cpu or cuda.
  explicit Model(const std::string& dir, const std::string& checkpoint = "", const std::string& device = "cpu");
  // An ensemble of translation models (service/translator.h): weights one per directory, or empty
  // for equal ones; batch_tokens 0 for the default. InputError when the vocabularies differ.
  Model(const std::vector<std::string>& dirs, const std::vector<double>& weights, const std::string& checkpoint,
        const std::string& device, int batch_tokens);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  std::string task() const;         // "translate" or "lm"
  std::string config_json() const;  // every config key
  std::string checkpoint() const;   // the file the weights came from

  // Up to settings.nbest hypotheses per line, best first.
  std::vector<std::vector<TextHypothesis>> translate(const std::vector<std::string>& lines, const SearchSettings& s);
  // log p(target | source) of given pairs (forced decoding), as `yoke score-pairs`.
  std::vector<PairScore> score(const std::vector<std::string>& sources, const std::vector<std::string>& targets,
                               double lenpen);
  // A language model's continuation of `prompt` (prompt included), as `yoke generate`.
  std::string generate(const std::string& prompt, const SamplingSettings& s);
  // The word matrices as each role reads them ([V, d], materialised; tied roles hold the same
  // values): "source" (translation models), "target", "output".
  std::map<std::string, Matrix> word_matrices() const;

 private:
  struct Loaded;
  std::unique_ptr<Loaded> m_;
};

}  // namespace yoke::python
