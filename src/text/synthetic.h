// A toy language pair for the demo: small enough to learn in minutes, rich enough to need
// attention (word reordering, 1:2 word mappings, copied names and numbers).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "text/prepare.h"

namespace yoke {

struct SyntheticOptions {
  size_t train = 20000, valid = 500, test = 500;
  uint64_t seed = 7;  // picks the sentences; the two languages are the same for every seed
};

// Writes train/valid/test .src/.tgt (plain UTF-8, one sentence per line) into `dir`, creating
// it. Both sides of a pair come from one sentence structure:
//   source: SVO, determiner [number] adjectives noun, prepositions, adverb after the verb;
//   target: SOV, determiner [number] noun adjectives (reversed), postpositions, adverb before
//           the verb.
// About 150 source words with a mostly 1:1 lexicon (a few words become two target words);
// names and numbers (1-99) are written the same on both sides. No sentence occurs twice.
void write_synthetic_corpus(const std::string& dir, const SyntheticOptions& opts);

// What `yoke prepare` needs for such a corpus: its train/valid splits and its test split under
// the name "toy"; vocabulary options left at their defaults.
PrepareOptions synthetic_prepare_options(const std::string& corpus_dir, const std::string& out_dir);

}  // namespace yoke
