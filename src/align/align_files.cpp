#include "align/align_files.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <sstream>

#include "util/atomic_file.h"
#include "util/error.h"
#include "util/regular_file.h"

namespace yoke {

namespace {

using Corpus = Ibm2Aligner::Corpus;

std::vector<std::string> split_whitespace(const std::string& line) {
  std::vector<std::string> tokens;
  std::istringstream in(line);  // the C locale: ASCII whitespace only, UTF-8 bytes pass through
  for (std::string token; in >> token;) tokens.push_back(std::move(token));
  return tokens;
}

Corpus read_tokenized(const std::string& path) {
  require_regular_file(path, "tokenized corpus");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path, 0, "cannot open for reading");
  Corpus corpus;
  for (std::string line; std::getline(in, line);) corpus.push_back(split_whitespace(line));
  if (in.bad()) throw input_error(path, 0, "read error");
  return corpus;
}

void write_pharaoh(std::ostream& out, const std::vector<std::vector<std::pair<int, int>>>& links) {
  for (const auto& sentence : links) {
    for (size_t k = 0; k < sentence.size(); ++k)
      out << (k ? " " : "") << sentence[k].first << '-' << sentence[k].second;
    out << '\n';
  }
}

void write_table(std::ostream& out,
                 const std::vector<std::tuple<std::string, std::string, double>>& table) {
  char number[32];
  for (const auto& [given, generated, p] : table) {
    std::snprintf(number, sizeof number, "%.6g", p);
    out << given << '\t' << generated << '\t' << number << '\n';
  }
}

void log_history(const Ibm2Aligner& aligner, std::ostream& log) {
  const auto& history = aligner.history();
  for (size_t it = 0; it < history.size(); ++it)
    log << "align: iteration " << it + 1 << ": log-likelihood " << history[it].log_likelihood
        << ", perplexity " << history[it].perplexity << ", null posterior "
        << history[it].null_posterior << ", tension " << history[it].tension << '\n';
}

}  // namespace

AlignFilesResult align_files(const std::string& src_path, const std::string& tgt_path,
                             const std::string& out_path, const std::string& table_path,
                             const AlignOptions& options, std::ostream& log) {
  const Corpus src = read_tokenized(src_path);
  const Corpus tgt = read_tokenized(tgt_path);
  if (src.size() != tgt.size())
    throw input_error(src_path, 0, "has " + std::to_string(src.size()) + " lines but " +
                                       tgt_path + " has " + std::to_string(tgt.size()));
  const auto start = std::chrono::steady_clock::now();
  Ibm2Aligner aligner;
  aligner.train(src, tgt, options);
  const auto links = aligner.align(src, tgt);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log_history(aligner, log);
  log << "align: " << src.size() << " sentence pairs in " << seconds << " s ("
      << (options.reverse ? "reverse: p(source|target)" : "forward: p(target|source)")
      << "), final tension " << aligner.tension() << '\n';

  write_file_atomically(out_path, [&](std::ostream& out) { write_pharaoh(out, links); });
  if (!table_path.empty()) {
    const auto table = aligner.translation_table(options.prob_threshold_table);
    write_file_atomically(table_path, [&](std::ostream& out) { write_table(out, table); });
    log << "align: " << table.size() << " table entries (p >= " << options.prob_threshold_table
        << ") written to " << table_path << '\n';
  }
  return {src.size(), seconds, aligner.tension()};
}

}  // namespace yoke
