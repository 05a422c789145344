// `yoke eval-lm`: perplexity of a language model on a text file, per subword and per word, with
// the scoring (sentences, or stream windows with their block and stride) printed alongside.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "lm/perplexity.h"
#include "text/corpus.h"
#include "store/model_store.h"
#include "util/error.h"

namespace yoke::cli {

int cmd_eval_lm(int argc, char** argv) {
  Command cmd("eval-lm",
              "Perplexity of a language model (task = lm) on raw text, one sentence per line (plain or .gz).\n"
              "Prints both perplexities from one likelihood: per subword (every subword and one end-of-line\n"
              "per line are predicted) and per word (the same total over whitespace words plus one\n"
              "end-of-line per line), and how the text was scored. Blank lines are skipped.\n\n"
              "example: yoke eval-lm --model runs/lm-tied --text data/lm-en/test.flickr2016.txt");
  ModelOptions model;
  add_model_options(cmd, model, /*with_device=*/true);
  std::string path;
  int64_t block = 0, stride = 0;
  bool json = false;
  int threads = 0;
  cmd.add_option("--text", path, "text to score")->type_name("FILE")->required();
  CLI::Option* block_given =
      add_value(cmd, "--block", block, "N", "0 = sentence by sentence; N = the text as one stream in windows of N tokens")
          ->default_str("as the model was trained (lm_block)");
  CLI::Option* stride_given =
      add_value(cmd, "--stride", stride, "N", "windows start every N tokens; below --block, each window scores only its last N")
          ->default_str("block (no overlap)");
  cmd.add_flag("--json", json, "print one JSON object instead of the table");
  CLI::Option* threads_given = add_threads_option(cmd, threads);
  if (!cmd.read(argc, argv)) return 0;
  if (*threads_given) at::set_num_threads(threads);
  auto m = load_model_for(Task::lm, model.dir, model.checkpoint, model.device);
  std::vector<std::string> lines;
  for (auto& l : read_lines(path))
    if (!is_blank(l)) lines.push_back(std::move(l));
  if (!*block_given) block = m.config.lm_block;
  if (!*stride_given) stride = block;
  const Perplexity p = text_perplexity(*m.model, m.tgt_vocab, lines, block, stride);
  if (json) {
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
