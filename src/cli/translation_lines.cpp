#include "cli/translation_lines.h"

#include "decode/scoring_pairs.h"

namespace yoke::cli {

std::string translation_lines(const Translation& t, const TranslationService& service, const OutputFields& f) {
  auto line = [&](const TranslatedHypothesis& h, bool with_score) {
    std::string text = h.text;
    if (with_score) text += " ||| " + format_score(h.score);
    if (f.alignment) text += " ||| " + service.alignment_text(t, h, f.alignment_format);
    return text + '\n';
  };
  std::string out;
  if (f.nbest > 0) {
    for (const auto& h : t.hypotheses) out += std::to_string(t.index) + " ||| " + line(h, true);
    return out;
  }
  if (t.hypotheses.empty()) return std::string(f.scores ? " ||| -inf\n" : "\n");
  return line(t.hypotheses.front(), f.scores);
}

}  // namespace yoke::cli
