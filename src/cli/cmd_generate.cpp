// `yoke generate`: continues a prompt with a language model, printing text as tokens come.
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "cli/options.h"
#include "lm/generate.h"
#include "lm/prompt.h"
#include "store/model_store.h"
#include "util/error.h"

namespace yoke::cli {

int cmd_generate(int argc, char** argv) {
  Command cmd("generate",
              "Continues --prompt (or starts a sentence) with a language model (task = lm), printing the\n"
              "text as each token is produced. Stops at the end of the sentence or after --max-tokens.\n"
              "--temperature 0 is greedy search; --top-k 1 gives the same tokens.\n\n"
              "example: yoke generate --model runs/lm-tied --prompt \"A man\" --top-p 0.9 --seed 7");
  ModelOptions model;
  add_model_options(cmd, model, /*with_device=*/true);
  std::string prompt;
  SamplingOptions o;
  int seed = 1, threads = 0;
  cmd.add_option("--prompt", prompt, "text to continue")->type_name("TEXT")->default_str("empty: a new sentence");
  add_value(cmd, "--temperature", o.temperature, "T", "divides the logits; 0 = greedy")->capture_default_str();
  add_value(cmd, "--top-k", o.top_k, "K", "sample among the K most likely tokens; 0 = all")->capture_default_str();
  add_value(cmd, "--top-p", o.top_p, "P", "sample among the most likely tokens holding mass P")->capture_default_str();
  add_value(cmd, "--max-tokens", o.max_tokens, "N", "new tokens at most")->capture_default_str();
  add_value(cmd, "--seed", seed, "S", "random seed: the same seed gives the same text")->capture_default_str();
  CLI::Option* threads_given = add_threads_option(cmd, threads);
  if (!cmd.read(argc, argv)) return 0;
  if (*threads_given) compat::set_compute_threads(threads);
  auto m = load_model_for(Task::lm, model.dir, model.checkpoint, model.device);
  o.seed = uint64_t(seed);
  const Prompt start = make_prompt(m.tgt_vocab, m.config.lm_block > 0, m.model->spec().max_positions, prompt);

  // The text so far is decoded again at each token and only what is new is printed, so that
  // pieces that join words ("▁") come out as SentencePiece would write them.
  std::vector<int> generated;
  std::string printed = prompt_and_continuation(m.tgt_vocab, start, generated);
  std::fputs(printed.c_str(), stdout);
  std::fflush(stdout);
  generate_tokens(*m.model, start.context, o, [&](int token) {
    generated.push_back(token);
    const std::string text = prompt_and_continuation(m.tgt_vocab, start, generated);
    if (text.compare(0, printed.size(), printed) == 0) std::fputs(text.c_str() + printed.size(), stdout);
    else std::fputs(("\n" + text).c_str(), stdout);  // a rare re-segmentation: print the whole line anew
    printed = text;
    std::fflush(stdout);
  });
  std::fputs("\n", stdout);
  return 0;
}

}  // namespace yoke::cli
