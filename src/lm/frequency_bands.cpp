#include "lm/frequency_bands.h"

#include <cmath>
#include <filesystem>
#include <sstream>

#include "text/binarized.h"
#include "text/data_meta.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace yoke {

TrainingCounts count_training_tokens(const std::string& data_dir, int64_t vocab_size) {
  if (!fs::is_directory(data_dir)) throw input_error(data_dir, 0, "not found (no such data directory)");
  if (fs::exists(fs::path(data_dir) / "meta.json"))
    if (const std::string task = DataMeta::read(data_dir).task; task != "lm")
      throw input_error(data_dir, 0, "is not language-model data (its meta.json says task " + task +
                                         "): prepare it with `yoke prepare --lm`");
  TrainingCounts c;
  c.dir = data_dir;
  c.by_id.assign(size_t(vocab_size), 0);
  for (const auto& file : training_files(data_dir)) {
    const TokenizedCorpus corpus = load_binarized(file);
    for (int32_t id : corpus.tgt_tokens) {
      if (id < 0 || id >= vocab_size)
        throw input_error(file, 0, "holds token id " + std::to_string(id) + ", outside the model's vocabulary of " +
                                       std::to_string(vocab_size) + ": data prepared with another vocabulary");
      ++c.by_id[size_t(id)];
    }
    c.lines += int64_t(corpus.size());
    c.tokens += int64_t(corpus.tgt_tokens.size());
  }
  return c;
}

std::vector<int64_t> parse_band_edges(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return InputError("--band-edges " + text + ": " + why + " (e.g. " + default_band_edges + ")");
  };
  std::vector<int64_t> edges;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      throw bad("'" + item + "' is not a whole number");
    }
    if (used != item.size()) throw bad("'" + item + "' is not a whole number");
    if (v < 1) throw bad("edges are training counts of at least 1 (the band below the first edge holds 0)");
    if (!edges.empty() && v <= edges.back()) throw bad("edges must increase");
    edges.push_back(v);
  }
  if (edges.empty() || text.empty() || text.back() == ',') throw bad("a comma-separated list of counts");
  return edges;
}

double BandRow::mean_nll() const { return tokens > 0 ? nll / double(tokens) : 0.0; }
double BandRow::ppl() const { return std::exp(mean_nll()); }

FrequencyBands::FrequencyBands(TrainingCounts counts, std::vector<int64_t> edges, int eos)
    : counts_(std::move(counts)), edges_(std::move(edges)), eos_(eos), seen_(counts_.by_id.size(), false) {
  // Band k holds counts [lower(k), edges[k] − 1]; lower(0) = 0, the last band has no upper end.
  for (size_t k = 0; k <= edges_.size(); ++k) {
    BandRow r;
    r.min_count = k == 0 ? 0 : edges_[k - 1];
    r.max_count = k < edges_.size() ? edges_[k] - 1 : -1;
    if (r.max_count < 0) r.label = std::to_string(r.min_count) + "+";
    else if (r.max_count == r.min_count) r.label = std::to_string(r.min_count);
    else r.label = std::to_string(r.min_count) + "-" + std::to_string(r.max_count);
    rows_.push_back(r);
  }
  BandRow end;
  end.label = "end of line";
  end.min_count = end.max_count = counts_.lines;
  rows_.push_back(end);
}

size_t FrequencyBands::row_of(int id) const {
  if (id < 0 || size_t(id) >= counts_.by_id.size())
    throw InputError("frequency bands: token id " + std::to_string(id) + " is outside the counted vocabulary of " +
                     std::to_string(counts_.by_id.size()));
  if (id == eos_) return rows_.size() - 1;
  const int64_t n = counts_.by_id[size_t(id)];
  size_t k = 0;
  while (k < edges_.size() && n >= edges_[k]) ++k;
  return k;
}

void FrequencyBands::add(int id, double nll) {
  BandRow& r = rows_[row_of(id)];
  ++r.tokens;
  r.nll += nll;
  if (!seen_[size_t(id)]) {
    seen_[size_t(id)] = true;
    ++r.types;
  }
  ++tokens_;
  nll_ += nll;
}

void FrequencyBands::add(const std::vector<int32_t>& ids, const std::vector<float>& nll) {
  if (ids.size() != nll.size()) throw std::logic_error("FrequencyBands::add: one nll per id");
  for (size_t i = 0; i < ids.size(); ++i) add(ids[i], double(nll[i]));
}

}  // namespace yoke
