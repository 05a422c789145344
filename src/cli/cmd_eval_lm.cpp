// `yoke eval-lm`: perplexity of a language model on a text file, per subword and per word, with
// the scoring (sentences, or stream windows with their block and stride) printed alongside; with
// --bands, also by how often the predicted subword was seen in training (lm/frequency_bands.h).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "lm/frequency_bands.h"
#include "lm/perplexity.h"
#include "text/corpus.h"
#include "text/vocab.h"
#include "store/model_store.h"
#include "util/error.h"

namespace yoke::cli {
namespace {

// The training counts of the data `dir` (--train-counts-from, else the model's config.data),
// checked to be of the model's vocabulary: counts of a data set prepared again with another
// vocabulary would be counts of other subwords under the same ids. The pieces are compared, not
// the files' bytes: a vocabulary prepared again alike may record other training options.
TrainingCounts training_counts(const LoadedModel& m, const std::string& model_dir, const std::string& dir, bool named) {
  namespace fs = std::filesystem;
  const std::string hint = "name the data directory the model was trained on with --train-counts-from DIR";
  if (dir.empty()) throw InputError("--bands: the model's config names no data directory (config.data); " + hint);
  if (!fs::is_directory(dir))
    throw input_error(dir, 0, std::string("not found: --bands counts the training data here (") +
                                  (named ? "--train-counts-from" : "the model's config.data, relative to the directory "
                                                                    "yoke runs in") +
                                  "); run from the directory the model was trained in, or " + hint);
  if (fs::exists(fs::path(dir) / "spm.model") || fs::exists(fs::path(dir) / "spm.tgt.model")) {
    const Vocab data = Vocab::load(target_vocab_path(dir));
    const int at = first_difference(m.tgt_vocab, data);
    if (at >= 0)
      throw input_error(data.path(), 0,
                        "is not the vocabulary of the model in " + model_dir + " (" +
                            (data.size() != m.tgt_vocab.size()
                                 ? std::to_string(data.size()) + " subwords, the model's " +
                                       std::to_string(m.tgt_vocab.size())
                                 : "subword " + std::to_string(at) + " is '" + data.piece(at) + "', the model's '" +
                                       m.tgt_vocab.piece(at) + "'") +
                            "): the data set was prepared again, or is another one, and its counts would be of "
                            "other subwords; " + hint);
  }
  return count_training_tokens(dir, m.config.tgt_vocab_size);
}

void print_bands(const FrequencyBands& bands) {
  const auto& c = bands.counts();
  std::printf("bands       by the predicted subword's count in the training data %s (%lld subwords, %lld lines)\n",
              c.dir.c_str(), (long long)c.tokens, (long long)c.lines);
  std::printf("  %-13s %9s %7s %10s %11s\n", "train count", "tokens", "types", "nll/token", "ppl");
  const auto row = [](const std::string& label, int64_t tokens, int64_t types, double nll_sum) {
    if (tokens == 0) {
      std::printf("  %-13s %9d %7d %10s %11s\n", label.c_str(), 0, 0, "-", "-");
      return;
    }
    const double mean = nll_sum / double(tokens);
    std::printf("  %-13s %9lld %7lld %10.4f %11.3f\n", label.c_str(), (long long)tokens, (long long)types, mean,
                std::exp(mean));
  };
  int64_t types = 0;
  for (const auto& r : bands.rows()) {
    row(r.label, r.tokens, r.types, r.nll);
    types += r.types;
  }
  row("all", bands.tokens(), types, bands.nll());
}

// "nll" and "ppl" per token; null for a band the text never predicts.
nlohmann::json bands_json(const FrequencyBands& bands) {
  nlohmann::json rows = nlohmann::json::array();
  const auto or_null = [](bool has, double v) { return has ? nlohmann::json(v) : nlohmann::json(nullptr); };
  for (const auto& r : bands.rows())
    rows.push_back({{"label", r.label}, {"min_count", r.min_count},
                    {"max_count", r.max_count < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.max_count)},
                    {"tokens", r.tokens}, {"types", r.types}, {"nll", or_null(r.tokens > 0, r.mean_nll())},
                    {"ppl", or_null(r.tokens > 0, r.ppl())}, {"nll_sum", r.nll}});
  return rows;
}

}  // namespace

int cmd_eval_lm(int argc, char** argv) {
  Command cmd("eval-lm",
              "Perplexity of a language model (task = lm) on raw text, one sentence per line (plain or .gz).\n"
              "Prints both perplexities from one likelihood: per subword (every subword and one end-of-line\n"
              "per line are predicted) and per word (the same total over whitespace words plus one\n"
              "end-of-line per line), and how the text was scored. Blank lines are skipped.\n\n"
              "--bands adds the same likelihood split by how often each predicted subword occurs in the\n"
              "model's training data (its count in the data directory's binarized train set: config.data,\n"
              "or --train-counts-from DIR). The bands are count ranges from --band-edges: edges\n"
              "1,10,100,1000,10000 give 0 (never seen in training), 1-9, 10-99, 100-999, 1000-9999 and\n"
              "10000+. The end of a line is predicted once per line but is not a subword of the training\n"
              "text, so it has its own row, \"end of line\", and is in no band. Each row: the predictions\n"
              "in the text, their distinct subwords (types), mean -log p per token (nats) and perplexity\n"
              "exp(mean). Every prediction is in one row; all rows together (\"all\") are ppl/subword.\n\n"
              "example: yoke eval-lm --model runs/lm-tied --text data/lm-en/test.flickr2016.txt\n"
              "         yoke eval-lm --model runs/lm-tied --text data/lm-en/test.flickr2016.txt --bands");
  ModelOptions model;
  add_model_options(cmd, model, /*with_device=*/true);
  std::string path;
  int64_t block = 0, stride = 0;
  bool json = false;
  int threads = 0;
  cmd.add_option("--text", path, "text to score")->type_name("FILE")->required();
  CLI::Option* block_given =
      add_value(cmd, "--block", block, "N", "0 = sentence by sentence; N = the text as one stream in windows of N tokens")
          ->default_str("as the model was trained (lm_block)");
  CLI::Option* stride_given =
      add_value(cmd, "--stride", stride, "N", "windows start every N tokens; below --block, each window scores only its last N")
          ->default_str("block (no overlap)");
  cmd.add_flag("--json", json, "print one JSON object instead of the table (with --bands, its \"bands\" list)");
  bool bands_wanted = false;
  std::string edges_text = default_band_edges, counts_from;
  CLI::Option* bands_flag =
      cmd.add_flag("--bands", bands_wanted, "perplexity by band of the predicted subword's training count");
  add_value(cmd, "--band-edges", edges_text, "LIST",
            "with --bands: the lowest training count of each band above 0, increasing")
      ->capture_default_str()
      ->needs(bands_flag);
  CLI::Option* counts_given =
      add_value(cmd, "--train-counts-from", counts_from, "DIR",
                "with --bands: the data directory whose train set gives the counts")
          ->default_str("the model's config.data")
          ->needs(bands_flag);
  CLI::Option* threads_given = add_threads_option(cmd, threads);
  if (!cmd.read(argc, argv)) return 0;
  if (*threads_given) compat::set_compute_threads(threads);
  const std::vector<int64_t> edges = bands_wanted ? parse_band_edges(edges_text) : std::vector<int64_t>{};
  auto m = load_model_for(Task::lm, model.dir, model.checkpoint, model.device);
  // Counted before scoring: a missing or mismatched data directory fails in seconds.
  std::optional<FrequencyBands> bands;
  if (bands_wanted) {
    const bool named = bool(*counts_given);
    bands.emplace(training_counts(m, model.dir, named ? counts_from : m.config.data, named), edges, Vocab::eos);
  }
  std::vector<std::string> lines;
  for (auto& l : read_lines(path))
    if (!is_blank(l)) lines.push_back(std::move(l));
  if (!*block_given) block = m.config.lm_block;
  if (!*stride_given) stride = block;
  const Perplexity p = text_perplexity(*m.model, m.tgt_vocab, lines, block, stride);
  if (bands) bands->add(p.targets, p.token_nll);
  if (json) {
    nlohmann::json j = {{"text", path}, {"checkpoint", m.checkpoint}, {"lines", p.lines}, {"subwords", p.subwords},
                        {"words", p.words}, {"nll_nats", p.nll}, {"ppl_subword", p.per_subword()},
                        {"ppl_word", p.per_word()}, {"block", p.block}, {"stride", p.stride}, {"scoring", p.scoring()}};
    if (bands) {
      j["bands"] = bands_json(*bands);
      j["train_counts"] = {{"data", bands->counts().dir}, {"subwords", bands->counts().tokens},
                           {"lines", bands->counts().lines}, {"band_edges", edges}};
    }
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("model       %s\n", m.checkpoint.c_str());
  std::printf("text        %s (%lld lines, %lld words, %lld subwords incl. one end-of-line each)\n", path.c_str(),
              (long long)p.lines, (long long)p.words, (long long)p.subwords);
  std::printf("scoring     %s\n", p.scoring().c_str());
  std::printf("ppl/subword %.3f\n", p.per_subword());
  std::printf("ppl/word    %.3f\n", p.per_word());
  if (bands) print_bands(*bands);
  return 0;
}

}  // namespace yoke::cli
