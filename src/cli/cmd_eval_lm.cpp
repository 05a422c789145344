// `yoke eval-lm`: perplexity of a language model on a text file, per subword and per word, with
// the scoring (sentences, or stream windows with their block and stride) printed alongside.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/commands.h"
#include "lm/perplexity.h"
#include "text/corpus.h"
#include "train/model_store.h"
#include "util/error.h"

namespace yoke::cli {

int cmd_eval_lm(int argc, char** argv) {
  Args args("eval-lm",
            "Perplexity of a language model (task = lm) on raw text, one sentence per line (plain or .gz).\n"
            "Prints both perplexities from one likelihood: per subword (every subword and one end-of-line\n"
            "per line are predicted) and per word (the same total over whitespace words plus one\n"
            "end-of-line per line), and how the text was scored. Blank lines are skipped.\n\n"
            "example: yoke eval-lm --model runs/lm-tied --text data/lm-en/test.flickr2016.txt",
            {{"model", "DIR", "model directory (the save_dir of `yoke train`)"},
             {"checkpoint", "NAME", "checkpoint file in DIR", "checkpoint_best.ykp, else checkpoint_last.ykp"},
             {"device", "D", "cpu, cuda or auto (a GPU when there is one)", "cpu"},
             {"text", "FILE", "text to score"},
             {"block", "N", "0 = sentence by sentence; N = the text as one stream in windows of N tokens",
              "as the model was trained (lm_block)"},
             {"stride", "N", "windows start every N tokens; below --block, each window scores only its last N",
              "block (no overlap)"},
             {"json", "", "print one JSON object instead of the table"},
             {"threads", "N", "CPU threads", "all cores"}});
  if (!args.parse(argc, argv, 2)) return 0;
  if (args.has("threads")) at::set_num_threads(args.get_int("threads"));
  auto m = load_model(args.require("model"), args.has("checkpoint") ? args.get("checkpoint") : "", args.get("device"));
  if (m.config.task != "lm")
    throw InputError("yoke eval-lm: " + args.get("model") + " is a translation model (task = " + m.config.task + ")");
  const std::string path = args.require("text");
  std::vector<std::string> lines;
  for (auto& l : read_lines(path))
    if (!is_blank(l)) lines.push_back(std::move(l));
  const int64_t block = args.has("block") ? args.get_int("block") : m.config.lm_block;
  const int64_t stride = args.has("stride") ? args.get_int("stride") : block;
  const Perplexity p = text_perplexity(*m.model, m.tgt_vocab, lines, block, stride);
  if (args.flag("json")) {
    nlohmann::json j = {{"text", path}, {"checkpoint", m.checkpoint}, {"lines", p.lines}, {"subwords", p.subwords},
                        {"words", p.words}, {"nll_nats", p.nll}, {"ppl_subword", p.per_subword()},
                        {"ppl_word", p.per_word()}, {"block", p.block}, {"stride", p.stride}, {"scoring", p.scoring()}};
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("model       %s\n", m.checkpoint.c_str());
  std::printf("text        %s (%lld lines, %lld words, %lld subwords incl. one end-of-line each)\n", path.c_str(),
              (long long)p.lines, (long long)p.words, (long long)p.subwords);
  std::printf("scoring     %s\n", p.scoring().c_str());
  std::printf("ppl/subword %.3f\n", p.per_subword());
  std::printf("ppl/word    %.3f\n", p.per_word());
  return 0;
}

}  // namespace yoke::cli
