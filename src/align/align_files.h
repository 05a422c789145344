// File front end of the IBM-2 aligner: whitespace-tokenized parallel text in, Pharaoh links
// (and optionally the lexical table) out.
#pragma once
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>

#include "align/ibm2.h"

namespace yoke {

struct AlignFilesResult {
  size_t sentences;  // line pairs read (and written)
  double seconds;    // wall time of training and alignment
  double tension;    // final lambda
};

// Trains on src_path/tgt_path (one sentence per line, tokens split on ASCII whitespace) and
// writes one line of `src_index-tgt_index` links per sentence pair to out_path. When table_path
// is not empty, writes `given<TAB>generated<TAB>probability` with probability >=
// options.prob_threshold_table: forward that is source<TAB>target<TAB>A(target|source); with
// options.reverse it is target<TAB>source<TAB>p(source|target). Outputs are replaced atomically.
// Throws InputError for unreadable inputs or unequal line counts.
AlignFilesResult align_files(const std::string& src_path, const std::string& tgt_path,
                             const std::string& out_path, const std::string& table_path,
                             const AlignOptions& options, std::ostream& log);


}  // namespace yoke
