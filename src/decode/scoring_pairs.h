// The inputs of forced decoding (`yoke score-pairs`, `yoke translate --force-decode`, the Python
// module's score): source and target lines turned into ids, with errors that name file and line.
#pragma once
#include <string>
#include <vector>

#include "model/transformer.h"
#include "text/vocab.h"

namespace yoke {

struct ScoringPairs {
  std::vector<std::vector<int>> sources, targets;  // ids without eos
  std::vector<std::string> target_lines;           // the target lines as read
};

// Line i of the sources with line i of the targets; the counts must agree, and no sentence may
// be longer than the model's positions (a score of a cut sentence would mislead).
ScoringPairs encode_scoring_pairs(const Transformer& model, const Vocab& src_vocab, const Vocab& tgt_vocab,
                                  const std::vector<std::string>& src_lines, const std::string& src_name,
                                  const std::vector<std::string>& tgt_lines, const std::string& tgt_name);

// An n-best list (lines `INDEX ||| TEXT ||| …`, as `yoke translate --nbest` writes): each
// hypothesis with source line INDEX (counted from 0).
ScoringPairs encode_nbest_pairs(const Transformer& model, const Vocab& src_vocab, const Vocab& tgt_vocab,
                                const std::vector<std::string>& src_lines, const std::string& src_name,
                                const std::vector<std::string>& nbest_lines, const std::string& nbest_name);

// Scores as printed: fixed point with 6 decimals (enough to compare to 1e-4).
std::string format_score(double score);

}  // namespace yoke
