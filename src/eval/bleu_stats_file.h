// The BLEU sufficient statistics of every sentence of one output, as a file: what a report needs to
// recompute corpus BLEU and its significance test without the references (which come from a data
// set that is not ours to commit). One line per sentence, tab-separated:
//   hyp_len ref_len m1 t1 m2 t2 m3 t3 m4 t4
// (13a tokens; clipped n-gram matches m and hypothesis n-grams t for n = 1..4). Written gzipped.
#pragma once
#include <string>
#include <vector>

#include "eval/bleu.h"

namespace yoke {

void write_bleu_stats(const std::string& path, const std::vector<BleuStats>& stats);

// Throws InputError naming the file and line of a malformed line.
std::vector<BleuStats> read_bleu_stats(const std::string& path);

// The statistics of hyps[i] against refs[i]; InputError naming hyp_path when the line counts differ.
std::vector<BleuStats> bleu_stats_of(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                                     const std::string& hyp_path, bool lowercase = false);

}  // namespace yoke
