#include <iostream>

#include "align/align_files.h"
#include "align/pair_data.h"
#include "cli/args.h"
#include "cli/commands.h"

namespace yoke::cli {

int cmd_align(int argc, char** argv) {
  Args args("align",
            "Word-aligns tokenized parallel text (one sentence per line, tokens separated by spaces) with\n"
            "IBM Model 2 and fast_align's diagonal prior (Dyer et al. 2013): EM, null word, tension tuned\n"
            "between iterations. Writes Pharaoh links `i-j` (source i, target j) and, with --table, the\n"
            "lexical table A(y|x) as `source<TAB>target<TAB>probability` (probability >= 0.01).",
            {{"src", "FILE", "source text"},
             {"tgt", "FILE", "target text"},
             {"out", "FILE", "alignments (Pharaoh format)"},
             {"table", "FILE", "also write the translation table"},
             {"reverse", "", "model p(source | target) instead of p(target | source)"},
             {"iterations", "N", "EM iterations", "5"},
             {"p0", "P", "probability of the null word", "0.08"},
             {"threads", "N", "threads (0 = all cores)", "0"}});
  if (!args.parse(argc, argv, 2)) return 0;
  AlignOptions o;
  o.iterations = args.get_int("iterations");
  o.reverse = args.flag("reverse");
  o.p0 = args.get_double("p0");
  o.threads = args.get_int("threads");
  auto r = align_files(args.require("src"), args.require("tgt"), args.require("out"), args.get("table"), o, std::cerr);
  std::cerr << "aligned " << r.sentences << " sentence pairs in " << r.seconds << " s (tension " << r.tension << ")" << std::endl;
  return 0;
}

int cmd_pair(int argc, char** argv) {
  Args args("pair",
            "Pairs source and target words for shared-private embeddings (seed 003 §2.1): aligns the\n"
            "subword training corpus of a data directory, then pairs each source word with at most one\n"
            "target word — lm (by alignment probability, above --threshold), then wf (same form), then\n"
            "ur (by frequency rank). Writes `source<TAB>target<TAB>category<TAB>score`; use it with\n"
            "`tie = shared-private` and `pairs = FILE`.",
            {{"data", "DIR", "data directory from `yoke prepare`"},
             {"out", "FILE", "pair file to write"},
             {"table", "FILE", "also write the translation table A(y|x)"},
             {"threshold", "P", "minimum A(y|x) for an lm pair", "0.05"},
             {"iterations", "N", "EM iterations", "5"},
             {"threads", "N", "threads (0 = all cores)", "0"}});
  if (!args.parse(argc, argv, 2)) return 0;
  PairDataOptions o;
  o.data_dir = args.require("data");
  o.out_path = args.require("out");
  o.table_path = args.get("table");
  o.threshold = args.get_double("threshold");
  o.align.iterations = args.get_int("iterations");
  o.align.threads = args.get_int("threads");
  pair_data(o, std::cerr);
  return 0;
}

}  // namespace yoke::cli
