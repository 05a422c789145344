// `yoke generate`: continues a prompt with a language model, printing text as tokens come.
#include <cstdio>
#include <string>

#include "batch/lm_batch.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "lm/generate.h"
#include "train/model_store.h"
#include "util/error.h"

namespace yoke::cli {

int cmd_generate(int argc, char** argv) {
  Args args("generate",
            "Continues --prompt (or starts a sentence) with a language model (task = lm), printing the\n"
            "text as each token is produced. Stops at the end of the sentence or after --max-tokens.\n"
            "--temperature 0 is greedy search; --top-k 1 gives the same tokens.\n\n"
            "example: yoke generate --model runs/lm-tied --prompt \"A man\" --top-p 0.9 --seed 7",
            {{"model", "DIR", "model directory (the save_dir of `yoke train`)"},
             {"checkpoint", "NAME", "checkpoint file in DIR", "checkpoint_best.ykp, else checkpoint_last.ykp"},
             {"device", "D", "cpu, cuda or auto (a GPU when there is one)", "cpu"},
             {"prompt", "TEXT", "text to continue", "empty: a new sentence"},
             {"temperature", "T", "divides the logits; 0 = greedy", "1.0"},
             {"top-k", "K", "sample among the K most likely tokens; 0 = all", "0"},
             {"top-p", "P", "sample among the most likely tokens holding mass P", "1.0"},
             {"max-tokens", "N", "new tokens at most", "100"},
             {"seed", "S", "random seed: the same seed gives the same text", "1"},
             {"threads", "N", "CPU threads", "all cores"}});
  if (!args.parse(argc, argv, 2)) return 0;
  if (args.has("threads")) at::set_num_threads(args.get_int("threads"));
  auto m = load_model(args.require("model"), args.has("checkpoint") ? args.get("checkpoint") : "", args.get("device"));
  if (m.config.task != "lm")
    throw InputError("yoke generate: " + args.get("model") + " is a translation model (task = " + m.config.task + ")");
  SamplingOptions o;
  o.temperature = args.get_double("temperature");
  o.top_k = args.get_int("top-k");
  o.top_p = args.get_double("top-p");
  o.max_tokens = args.get_int("max-tokens");
  o.seed = uint64_t(args.get_int("seed"));
  const std::string prompt = args.has("prompt") ? args.get("prompt") : "";
  std::vector<int> ids{lm_start_token(m.config.lm_block > 0)};
  const auto prompt_ids = m.tgt_vocab.encode(prompt);
  ids.insert(ids.end(), prompt_ids.begin(), prompt_ids.end());

  // The text so far is decoded again at each token and only what is new is printed, so that
  // pieces that join words ("▁") come out as SentencePiece would write them.
  std::vector<int> all(prompt_ids);
  std::string printed = m.tgt_vocab.decode(all);
  std::fputs(printed.c_str(), stdout);
  std::fflush(stdout);
  generate_tokens(*m.model, ids, o, [&](int token) {
    all.push_back(token);
    const std::string text = m.tgt_vocab.decode(all);
    if (text.compare(0, printed.size(), printed) == 0) std::fputs(text.c_str() + printed.size(), stdout);
    else std::fputs(("\n" + text).c_str(), stdout);  // a rare re-segmentation: print the whole line anew
    printed = text;
    std::fflush(stdout);
  });
  std::fputs("\n", stdout);
  return 0;
}

}  // namespace yoke::cli
