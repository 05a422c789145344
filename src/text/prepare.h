// `yoke prepare`: raw parallel text -> SentencePiece model(s) + binarized train/valid corpora.
#pragma once
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace yoke {

struct PrepareOptions {
  std::string train_src, train_tgt, valid_src, valid_tgt;  // plain or gzip
  std::vector<std::pair<std::string, std::string>> tests;  // (src, tgt) per test set
  std::vector<std::string> test_names;                     // same length as tests; file-name safe
  std::string out_dir;
  bool force = false;  // replace a directory that is not empty (a data set prepared before, say)
  bool joint = true;  // one vocabulary for both sides (spm.model) or one each
  int vocab_size = 8000;
  int src_vocab_size = 0, tgt_vocab_size = 0;  // 0 -> vocab_size (separate vocabularies only)
  std::string model_type = "bpe";
  size_t max_len = 250;  // subword tokens per side; longer training pairs are dropped
  size_t input_sentence_size = 1000000;  // sentences sampled for SentencePiece training
  uint64_t seed = 1;
  int threads = 0;  // encoding threads; 0: one per core
  // Training text is read, encoded and written `chunk_pairs` pairs at a time and written in
  // shards of `shard_pairs` pairs (train.bin when one is enough, else train.000.bin, ...): memory
  // stays bounded whatever the corpus size. The output does not depend on chunk_pairs.
  size_t chunk_pairs = 100000;
  size_t shard_pairs = 1000000;
  // Optional training-data filters (valid and test sets are never filtered by them):
  bool dedup = false;     // drop a pair whose source and target both occurred together before
  double max_ratio = 0;   // drop a pair whose longer side has more than max_ratio x the subwords of the other; 0: off
  // Monolingual text for a language model: train_tgt, valid_tgt and the tests' second files are
  // the text (the source names are ignored); one vocabulary (spm.model); the corpora keep the
  // target side only; test sets are written as test.<name>.txt; meta.json says task "lm".
  bool lm = false;
  // A directory (a model's save_dir, an export, or another data set) whose SentencePiece model(s)
  // encode this data instead of new ones: copied byte for byte, so that a model trained on the
  // other data accepts this one (init_from, docs/export.md). Joint or separate as that directory
  // has them; `joint` must agree (the CLI takes it from the directory unless --joint is given).
  std::string vocab_from;
  // --hold-out NAME:N: N training pairs drawn at random with hold_out_seed (text/hold_out.h) become
  // test set NAME, and they and every training pair sharing a sentence with them stay out of the
  // vocabulary and the training corpus. A --test of the same name comes first in that set, the
  // held-out pairs after it (one larger test set of both); otherwise the set is the pairs alone.
  std::string hold_out_name;
  uint64_t hold_out_pairs = 0;  // 0: none
  uint64_t hold_out_seed = 1;
};

// Reads and checks the valid and test corpora first, then streams the training text: one pass
// reads and checks it while SentencePiece samples its training sentences (input errors come
// before the slow steps), the vocabulary is trained, and a second pass encodes and writes it in
// chunks. Writes into out_dir (built beside it and swapped in at the end; a
// directory that is not empty is an InputError unless `force`; one prepare per out_dir at a time):
//   spm.model/.vocab (joint) or spm.src.model/.vocab + spm.tgt.model/.vocab,
//   train.bin (or shards train.000.bin ...), valid.bin, valid.src.txt, valid.tgt.txt, test.<name>.src.txt/.tgt.txt
//   (the kept raw lines, aligned with the .bin files, as BLEU references), and meta.json last,
//   so its presence means a complete run.
// Valid and test pairs over max_len are dropped and counted like training pairs.
// With vocab_from the vocabulary is copied instead of trained (the text is then read once).
// meta.json (returned): {format_version, joint, model_type, max_len, seed, src_vocab_size,
//   tgt_vocab_size, src_vocab, tgt_vocab (file names in out_dir), vocab_from (the directory, when
//   given; model_type then says "copied"),
//   splits: {train: S, valid: S, "test.<name>": S...}} where S = {src, tgt (input paths), read,
//   kept, dropped_empty, dropped_long, src_tokens, tgt_tokens, and file (train/valid: the .bin)
//   or src_text/tgt_text (valid/test: the raw copies)}; train also has dropped_duplicate,
//   dropped_ratio, and `shards` (the .bin files in order) when there is more than one. With
//   --hold-out, train has held_out {test, pairs, seed, dropped_overlap} (read counts every line;
//   the held-out and overlapping pairs are in none of the dropped counts) and the test split
//   held_out {pairs, seed, from_file: the pairs read from its --test files before them}.
//   Token counts exclude bos/eos.
// Logs one line per split and one per trained vocabulary.
nlohmann::json prepare_data(const PrepareOptions& opts, std::ostream& log);

}  // namespace yoke
