// Subword vocabulary: a thin wrapper over SentencePiece with yoke's fixed special ids.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace yoke::spm {
class Processor;
}

namespace yoke {

struct VocabTrainOptions {
  std::vector<std::string> input_files;  // plain or gzip, one sentence per line
  std::string model_prefix;              // writes <prefix>.model and <prefix>.vocab
  int vocab_size = 8000;                 // exact: too large for the data is an error
  std::string model_type = "bpe";        // or "unigram"
  double character_coverage = 1.0;
  size_t input_sentence_size = 1000000;  // sentences sampled for training (0: all)
  int num_threads = 2;
  uint64_t seed = 1;
};

// Trains on the lines of opts.input_files, streamed (read as read_lines does, so gzip and UTF-8
// checks apply). Special ids are fixed: pad=0 <pad>, unk=1 <unk>, bos=2 <s>, eos=3 </s>.
void train_vocab(const VocabTrainOptions& opts);

// Same, but trains on sentences already in memory; opts.input_files only names the data in
// error messages. Each pointer is one block of sentences (e.g. source and target side).
void train_vocab_on(const VocabTrainOptions& opts,
                    const std::vector<const std::vector<std::string>*>& texts);

// The next training sentence into its argument; false at the end. May throw (InputError).
using SentenceSource = std::function<bool(std::string&)>;

// Same, on sentences given one at a time (e.g. read from files as they stream by: SentencePiece
// keeps only its sample of input_sentence_size sentences).
void train_vocab_from(const VocabTrainOptions& opts, const SentenceSource& next);

class Vocab {
 public:
  static constexpr int pad = 0, unk = 1, bos = 2, eos = 3;

  // Throws InputError naming the file when it is missing, not a SentencePiece model, or was
  // trained with other special ids.
  static Vocab load(const std::string& model_path);

  // Subword ids, without bos/eos. Thread-safe.
  std::vector<int> encode(const std::string& text) const;
  // Text of the ids up to the first eos; pad and bos are skipped.
  std::string decode(const std::vector<int>& ids) const;
  std::vector<std::string> encode_pieces(const std::string& text) const;
  std::string piece(int id) const;
  int piece_to_id(const std::string& piece) const;  // unk for unknown pieces
  int size() const;
  const std::string& path() const { return path_; }

 private:
  std::shared_ptr<const spm::Processor> sp_;  // shared: Vocab copies
  std::string path_;
};

// The first id at which two vocabularies differ (their pieces, or the smaller size when the sizes
// differ), or -1 when they give every id the same piece. Files that differ in bytes only (a model
// prepared again records other training options) compare equal.
int first_difference(const Vocab& a, const Vocab& b);

}  // namespace yoke
