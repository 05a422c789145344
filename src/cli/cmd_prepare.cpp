#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "text/prepare.h"
#include "util/error.h"

namespace yoke::cli {

int cmd_prepare(int argc, char** argv) {
  Args args("prepare",
            "Reads parallel text (plain or .gz), trains SentencePiece (one joint model or one per side), and\n"
            "writes the vocabularies, binarized train/valid sets and raw reference copies into --out.\n"
            "Empty pairs and training pairs longer than --max-len subwords are dropped and counted.\n\n"
            "example: yoke prepare --train-src train.en.gz --train-tgt train.de.gz --valid-src val.en.gz \\\n"
            "           --valid-tgt val.de.gz --test flickr:test.en.gz:test.de.gz --joint --vocab-size 8000 --out data/ende\n\n"
            "Language models (task = lm) take one monolingual text per split:\n"
            "  yoke prepare --lm --train train.en.gz --valid val.en.gz --test flickr:test.en.gz --vocab-size 8000 --out data/lm-en",
            {{"train-src", "FILE", "training source text"},
             {"train-tgt", "FILE", "training target text"},
             {"valid-src", "FILE", "validation source text"},
             {"valid-tgt", "FILE", "validation target text"},
             {"test", "NAME:SRC:TGT", "a test set kept as raw text for scoring (with --lm: NAME:TEXT)", "", true},
             {"lm", "", "monolingual text for a language model: --train, --valid, --test NAME:TEXT"},
             {"train", "FILE", "training text (with --lm)"},
             {"valid", "FILE", "validation text (with --lm)"},
             {"out", "DIR", "data directory to write"},
             {"joint", "", "one vocabulary for both languages (needed for tie = all / src-tgt)"},
             {"vocab-size", "N", "vocabulary size (joint, or each side)", "8000"},
             {"src-vocab-size", "N", "source vocabulary size (separate vocabularies)", "vocab-size"},
             {"tgt-vocab-size", "N", "target vocabulary size (separate vocabularies)", "vocab-size"},
             {"model-type", "bpe|unigram", "SentencePiece model type", "bpe"},
             {"max-len", "N", "drop training pairs with more subwords on a side", "250"},
             {"seed", "N", "seed for SentencePiece's sentence sampling", "1"},
             {"threads", "N", "threads for encoding", "2"}});
  if (!args.parse(argc, argv, 2)) return 0;
  PrepareOptions o;
  o.lm = args.flag("lm");
  if (o.lm) {
    o.train_tgt = args.require("train");
    o.valid_tgt = args.require("valid");
  } else {
    o.train_src = args.require("train-src");
    o.train_tgt = args.require("train-tgt");
    o.valid_src = args.require("valid-src");
    o.valid_tgt = args.require("valid-tgt");
  }
  o.out_dir = args.require("out");
  o.joint = args.flag("joint");
  o.vocab_size = args.get_int("vocab-size");
  o.src_vocab_size = args.has("src-vocab-size") ? args.get_int("src-vocab-size") : 0;
  o.tgt_vocab_size = args.has("tgt-vocab-size") ? args.get_int("tgt-vocab-size") : 0;
  o.model_type = args.get("model-type");
  o.max_len = size_t(args.get_int("max-len"));
  o.seed = uint64_t(args.get_int("seed"));
  o.threads = args.get_int("threads");
  for (const auto& t : args.all("test")) {
    if (o.lm) {
      const auto a = t.find(':');
      if (a == std::string::npos) throw InputError("yoke prepare --lm: --test expects NAME:TEXT, got '" + t + "'");
      o.test_names.push_back(t.substr(0, a));
      o.tests.emplace_back("", t.substr(a + 1));
      continue;
    }
    const auto a = t.find(':'), b = t.find(':', a == std::string::npos ? a : a + 1);
    if (a == std::string::npos || b == std::string::npos)
      throw InputError("yoke prepare: --test expects NAME:SRC:TGT, got '" + t + "'");
    o.test_names.push_back(t.substr(0, a));
    o.tests.emplace_back(t.substr(a + 1, b - a - 1), t.substr(b + 1));
  }
  prepare_data(o, std::cerr);
  std::cerr << "wrote " << o.out_dir << std::endl;
  return 0;
}

}  // namespace yoke::cli
