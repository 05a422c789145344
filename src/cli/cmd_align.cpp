#include <iostream>

#include "align/align_files.h"
#include "align/pair_data.h"
#include "cli/commands.h"
#include "cli/options.h"

namespace yoke::cli {

int cmd_align(int argc, char** argv) {
  Command cmd("align",
              "Word-aligns tokenized parallel text (one sentence per line, tokens separated by spaces) with\n"
              "IBM Model 2 and fast_align's diagonal prior (Dyer et al. 2013): EM, null word, tension tuned\n"
              "between iterations. Writes Pharaoh links `i-j` (source i, target j) and, with --table, the\n"
              "lexical table A(y|x) as `source<TAB>target<TAB>probability` (probability >= 0.01).");
  std::string src, tgt, out, table;
  AlignOptions o;
  o.threads = 0;  // all cores
  cmd.add_option("--src", src, "source text")->type_name("FILE")->required();
  cmd.add_option("--tgt", tgt, "target text")->type_name("FILE")->required();
  cmd.add_option("--out", out, "alignments (Pharaoh format)")->type_name("FILE")->required();
  cmd.add_option("--table", table, "also write the translation table")->type_name("FILE");
  cmd.add_flag("--reverse", o.reverse, "model p(source | target) instead of p(target | source)");
  add_value(cmd, "--iterations", o.iterations, "N", "EM iterations")->capture_default_str();
  add_value(cmd, "--p0", o.p0, "P", "probability of the null word")->capture_default_str();
  add_value(cmd, "--threads", o.threads, "N", "threads (0 = all cores)")->capture_default_str();
  if (!cmd.read(argc, argv)) return 0;
  auto r = align_files(src, tgt, out, table, o, std::cerr);
  std::cerr << "aligned " << r.sentences << " sentence pairs in " << r.seconds << " s (tension " << r.tension << ")" << std::endl;
  return 0;
}

int cmd_pair(int argc, char** argv) {
  Command cmd("pair",
              "Pairs source and target words for shared-private embeddings (Liu et al. 2019, §2.1): aligns the\n"
              "subword training corpus of a data directory, then pairs each source word with at most one\n"
              "target word — lm (by alignment probability, above --threshold), then wf (same form), then\n"
              "ur (by frequency rank). Writes `source<TAB>target<TAB>category<TAB>score`; use it with\n"
              "`tie = shared-private` and `pairs = FILE`.");
  PairDataOptions o;
  o.align.threads = 0;  // all cores
  cmd.add_option("--data", o.data_dir, "data directory from `yoke prepare`")->type_name("DIR")->required();
  cmd.add_option("--out", o.out_path, "pair file to write")->type_name("FILE")->required();
  cmd.add_option("--table", o.table_path, "also write the translation table A(y|x)")->type_name("FILE");
  add_value(cmd, "--threshold", o.threshold, "P", "minimum A(y|x) for an lm pair")->capture_default_str();
  add_value(cmd, "--iterations", o.align.iterations, "N", "EM iterations")->capture_default_str();
  add_value(cmd, "--threads", o.align.threads, "N", "threads (0 = all cores)")->capture_default_str();
  if (!cmd.read(argc, argv)) return 0;
  pair_data(o, std::cerr);
  return 0;
}

}  // namespace yoke::cli
