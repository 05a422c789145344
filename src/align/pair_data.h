// Word pairs for shared-private embeddings from a prepared data directory: align the subword
// training corpus with IBM-2 and pair the vocabularies (Liu et al. 2019, §2.1).
#pragma once
#include <ostream>
#include <string>

#include "align/ibm2.h"
#include "align/pairing.h"

namespace yoke {

struct PairDataOptions {
  std::string data_dir;
  std::string out_path;     // the pair file
  std::string table_path;   // optional: also write A(y|x)
  double threshold = 0.05;  // minimum A(y|x) for an lm pair
  AlignOptions align;
};

// Returns the counts per category; logs them.
PairingCounts pair_data(const PairDataOptions& opts, std::ostream& log);

// The vocabularies of a data or model directory as pairing input (words only).
PairingInput vocabulary_words(const std::string& dir);

}  // namespace yoke
