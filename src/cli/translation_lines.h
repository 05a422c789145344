// How `yoke translate` prints one input line's Translation, as fairseq and Marian do: TEXT, then
// ` ||| SCORE` with --scores, then ` ||| ALIGNMENT` with --alignment (always the last field); with
// --nbest N, one `INDEX ||| TEXT ||| SCORE` line per hypothesis (INDEX counts input lines from 0).
#pragma once
#include <string>

#include "decode/translation_service.h"
#include "decode/word_alignment.h"

namespace yoke::cli {

struct OutputFields {
  int nbest = 0;  // 0: the best translation only
  bool scores = false, alignment = false;
  AlignmentFormat alignment_format;
};

// The line(s) for `t`, each ending in '\n'. A line whose constraints no hypothesis met prints empty
// (" ||| -inf" with scores); with --nbest it prints nothing.
std::string translation_lines(const Translation& t, const TranslationService& service, const OutputFields& fields);

}  // namespace yoke::cli
