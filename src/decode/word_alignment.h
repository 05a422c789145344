// Word alignments read off a hypothesis's cross-attention (Hypothesis::attention), as Marian's
// --alignment prints them: hard links in Pharaoh format "SRC-TGT" (0-based), or soft rows of
// weights, on subwords or on words (SentencePiece marks a word's first piece with "▁").
// Plain vectors and strings: no tensors here.
#pragma once
#include <string>
#include <vector>

namespace yoke {

struct AlignmentFormat {
  bool soft = false;   // weights instead of links
  bool words = true;   // whole words instead of subwords
};

// The word index of each piece: a piece that starts with "▁" begins a new word.
std::vector<int> word_of_piece(const std::vector<std::string>& pieces);

// attention: one row per target subword and one for eos, one column per source subword and one
// for eos (eos rows and columns are left out). On words, a target word's row is the mean of its
// subwords' rows and a source word's column the sum of its subwords' columns. Hard: each target
// unit linked to its most attended source unit, "s-t" in target order, space-separated. Soft: per
// target unit the weights over the source units, comma-separated, rows space-separated.
std::string format_alignment(const std::vector<std::vector<float>>& attention, const std::vector<std::string>& src_pieces,
                             const std::vector<std::string>& tgt_pieces, const AlignmentFormat& format);

// The matrix format_alignment prints: [target units][source units].
std::vector<std::vector<double>> unit_attention(const std::vector<std::vector<float>>& attention,
                                                const std::vector<std::string>& src_pieces,
                                                const std::vector<std::string>& tgt_pieces, bool words);

}  // namespace yoke
