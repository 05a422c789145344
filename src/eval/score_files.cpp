#include "eval/score_files.h"

#include <algorithm>
#include <vector>

#include "eval/bleu.h"
#include "eval/chrf.h"
#include "text/corpus.h"
#include "util/error.h"

namespace yoke {

nlohmann::json score_files(const std::string& hyp_path, const std::string& ref_path,
                           bool lowercase) {
  const std::vector<std::string> hyps = read_lines(hyp_path);
  const std::vector<std::string> refs = read_lines(ref_path);
  if (hyps.size() != refs.size())
    throw input_error(hyp_path, 0,
                      "hypothesis file has " + std::to_string(hyps.size()) +
                          " lines but reference file " + ref_path + " has " +
                          std::to_string(refs.size()) + "; they must be line-aligned");
  // sacreBLEU would print 0 or 100 for no text at all; neither says anything.
  if (refs.empty()) throw input_error(ref_path, 0, "no lines to score (both files are empty)");

  BleuStats bleu;
  ChrfStats chrf_pp;
  for (size_t i = 0; i < hyps.size(); ++i) {
    bleu += bleu_sentence_stats(hyps[i], refs[i], lowercase);
    chrf_pp += chrf_sentence_stats(hyps[i], refs[i], 2, /*lowercase=*/false);
  }
  // chrF's statistics are the character orders that lead chrF++'s (see ChrfStats).
  ChrfStats chrf;
  const size_t char_part = std::min<size_t>(chrf_pp.v.size(), 3 * 6);
  chrf.v.assign(chrf_pp.v.begin(), chrf_pp.v.begin() + char_part);
  const BleuScore b = bleu_from_stats(bleu);
  return nlohmann::json{{"bleu", b.score},
                        {"chrf", chrf_from_stats(chrf, 0)},
                        {"chrf_pp", chrf_from_stats(chrf_pp, 2)},
                        {"precisions", b.precisions},
                        {"bp", b.bp},
                        {"sys_len", b.sys_len},
                        {"ref_len", b.ref_len}};
}

}  // namespace yoke
