#include "align/pair_data.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "text/binarized.h"
#include "text/data_meta.h"
#include "text/vocab.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace yoke {
namespace {

std::string vocab_file(const std::string& dir, const char* side) {
  const auto joint = fs::path(dir) / "spm.model";
  if (fs::exists(joint)) return joint.string();
  const auto own = fs::path(dir) / (std::string("spm.") + side + ".model");
  if (!fs::exists(own)) throw input_error(dir, 0, std::string("no spm.model or spm.") + side + ".model here");
  return own.string();
}

std::vector<std::string> words_of(const Vocab& v) {
  std::vector<std::string> out(size_t(v.size()));
  for (int i = 0; i < v.size(); ++i) out[size_t(i)] = v.piece(i);
  return out;
}

}  // namespace

PairingInput vocabulary_words(const std::string& dir) {
  PairingInput in;
  in.src_words = words_of(Vocab::load(vocab_file(dir, "src")));
  in.tgt_words = words_of(Vocab::load(vocab_file(dir, "tgt")));
  return in;
}

PairingCounts pair_data(const PairDataOptions& opts, std::ostream& log) {
  const auto t0 = std::chrono::steady_clock::now();
  PairingInput in = vocabulary_words(opts.data_dir);
  in.threshold = opts.threshold;
  in.src_freq.assign(in.src_words.size(), 0);
  in.tgt_freq.assign(in.tgt_words.size(), 0);
  // The aligner holds the whole corpus as words: every shard of a sharded corpus, in order.
  Ibm2Aligner::Corpus src, tgt;
  for (const auto& file : training_files(opts.data_dir)) {
    const auto corpus = load_binarized(file);
    for (size_t i = 0; i < corpus.size(); ++i) {
      src.emplace_back();
      tgt.emplace_back();
      for (size_t j = 0; j < corpus.src_len(i); ++j) {
        const int id = corpus.src(i)[j];
        src.back().push_back(in.src_words[size_t(id)]);
        in.src_freq[size_t(id)] += 1;
      }
      for (size_t j = 0; j < corpus.tgt_len(i); ++j) {
        const int id = corpus.tgt(i)[j];
        tgt.back().push_back(in.tgt_words[size_t(id)]);
        in.tgt_freq[size_t(id)] += 1;
      }
    }
  }
  // pad, unk, bos, eos keep private rows.
  in.src_skip.assign(in.src_words.size(), false);
  in.tgt_skip.assign(in.tgt_words.size(), false);
  for (int s : {Vocab::pad, Vocab::unk, Vocab::bos, Vocab::eos}) { in.src_skip[size_t(s)] = true; in.tgt_skip[size_t(s)] = true; }

  AlignOptions ao = opts.align;
  ao.reverse = false;  // pairing needs A(y|x): target given source
  Ibm2Aligner aligner;
  aligner.train(src, tgt, ao);
  std::unordered_map<std::string, int> src_id, tgt_id;
  for (size_t i = 0; i < in.src_words.size(); ++i) src_id.emplace(in.src_words[i], int(i));
  for (size_t i = 0; i < in.tgt_words.size(); ++i) tgt_id.emplace(in.tgt_words[i], int(i));
  const auto table = aligner.translation_table(std::min(0.01, opts.threshold));
  std::ostringstream table_out;
  for (const auto& [x, y, p] : table) {
    auto xi = src_id.find(x), yi = tgt_id.find(y);
    if (xi != src_id.end() && yi != tgt_id.end()) in.align_prob.emplace_back(xi->second, yi->second, p);
    if (p >= 0.01) table_out << x << '\t' << y << '\t' << p << '\n';
  }
  if (!opts.table_path.empty()) write_file_atomically(opts.table_path, table_out.str());
  const auto pairs = pair_words(in);
  write_pairs(opts.out_path, pairs, in);
  const auto counts = count_pairs(pairs, in.src_words.size(), in.tgt_words.size());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  log << "pairs: " << counts.lm << " lm, " << counts.wf << " wf, " << counts.ur << " ur; unpaired " << counts.src_unpaired
      << " source / " << counts.tgt_unpaired << " target words (aligned " << src.size() << " pairs in " << secs
      << " s) -> " << opts.out_path << std::endl;
  return counts;
}

}  // namespace yoke
