// Scoring a hypothesis file against a reference file with sacreBLEU-compatible metrics.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace yoke {

// Reads both files (UTF-8, one sentence per line; see read_lines in text/corpus.h) and returns
//   {"bleu", "chrf", "chrf_pp", "precisions": [4], "bp", "sys_len", "ref_len"}
// with BLEU, chrF (word order 0) and chrF++ (word order 2) on sacreBLEU's 0..100 scale.
// `lowercase` is sacreBLEU's `--lowercase` (-lc): it applies to BLEU only. chrF and chrF++ stay
// case-sensitive, as with sacreBLEU's command line, which lowercases them only under its own
// --chrf-lowercase (the shared oracle cases were scored that way).
// Files with different line counts are an InputError naming both files and both counts.
nlohmann::json score_files(const std::string& hyp_path, const std::string& ref_path,
                           bool lowercase);

}  // namespace yoke
