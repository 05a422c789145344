// Perplexity by how often the predicted token was seen in training (`yoke eval-lm --bands`): every
// prediction of a scored text (lm/perplexity.h) is put in a band by its target's count in the
// training data, and each band gets its tokens, its distinct types, its mean −log p and its
// perplexity. Bands are fixed, log-spaced count ranges given by their lower edges: edges 1, 10,
// 100, 1000, 10000 give the bands 0 (never seen), 1–9, 10–99, 100–999, 1000–9999 and ≥ 10000.
// The end of a line (eos) is predicted once per line and never stored in the training files, so it
// has a row of its own, "end of line", and belongs to no band.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace yoke {

// How often each token id occurs in a data directory's binarized training text (the target side,
// which is a language model's text), counted once over all its files (train.bin or its shards).
struct TrainingCounts {
  std::string dir;             // the data directory
  std::vector<int64_t> by_id;  // by_id[id]: occurrences; ids of the vocabulary, 0 .. vocab_size − 1
  int64_t lines = 0;           // training lines: each ends in one end-of-line prediction
  int64_t tokens = 0;          // all occurrences (Σ by_id)
};

// Throws InputError naming `data_dir` when it is not a directory, and naming a file when it cannot
// be read or holds an id outside 0 .. vocab_size − 1 (data of another vocabulary).
TrainingCounts count_training_tokens(const std::string& data_dir, int64_t vocab_size);

// The default lower edges of the bands above 0, as --band-edges writes them.
inline constexpr const char* default_band_edges = "1,10,100,1000,10000";

// "1,10,100" → {1, 10, 100}: whole numbers ≥ 1, strictly increasing; InputError otherwise.
std::vector<int64_t> parse_band_edges(const std::string& text);

struct BandRow {
  std::string label;       // "0", "1-9", "10000+", "end of line"
  int64_t min_count = 0;   // the band's training counts, both ends included;
  int64_t max_count = -1;  // −1: no upper end. End of line: both are its training count (lines).
  int64_t tokens = 0;      // predictions of the text in the band
  int64_t types = 0;       // distinct token ids among them
  double nll = 0;          // their summed −log p, nats
  double mean_nll() const;  // nll / tokens (0 without tokens)
  double ppl() const;       // exp(mean_nll)
};

class FrequencyBands {
 public:
  // counts: the training counts; edges: as parse_band_edges gives them; eos: the end-of-line id.
  FrequencyBands(TrainingCounts counts, std::vector<int64_t> edges, int eos);

  // The row a prediction of `id` goes to: a band by its training count, or the end-of-line row.
  // Ids outside the counted vocabulary throw InputError.
  size_t row_of(int id) const;

  // One prediction. Predictions added in the order the perplexity scored them give a total nll
  // equal to Perplexity::nll, bit for bit (the same doubles added in the same order).
  void add(int id, double nll);
  void add(const std::vector<int32_t>& ids, const std::vector<float>& nll);

  // The bands in count order, then the end-of-line row.
  const std::vector<BandRow>& rows() const { return rows_; }
  const TrainingCounts& counts() const { return counts_; }
  int64_t tokens() const { return tokens_; }
  double nll() const { return nll_; }  // all predictions, in the order added

 private:
  TrainingCounts counts_;
  std::vector<int64_t> edges_;
  int eos_;
  std::vector<BandRow> rows_;
  std::vector<bool> seen_;  // by id: predicted at least once (for types)
  int64_t tokens_ = 0;
  double nll_ = 0;
};

}  // namespace yoke
