#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/config_options.h"
#include "store/model_store.h"

namespace yoke::cli {

int cmd_params(int argc, char** argv) {
  Command cmd("params",
              "Prints what a config's model costs: total parameters, Emb. (word-representation\n"
              "parameters, shared ones counted once) and Red. (the reduction of Emb. against the untied\n"
              "model with the same vocabularies). Needs no data: give src_vocab_size / tgt_vocab_size /\n"
              "joint_vocab, or data = DIR to read them from a prepared data directory.\n\n"
              "example: yoke params --set tie=all --set d_model=256 --set src_vocab_size=8000 \\\n"
              "           --set tgt_vocab_size=8000 --set joint_vocab=true --json");
  bool json = false;
  cmd.add_flag("--json", json, "print one JSON object (params, emb, red, emb_untied, tie, output)");
  ConfigOptions config(cmd);
  if (!cmd.read(argc, argv) || config.print_requested_table()) return 0;
  Config cfg = config.read();
  fill_vocab_sizes(cfg);
  cfg.validate();
  auto model = build_unset_model(cfg, cfg.data);  // only counted
  const int64_t total = count_parameters(*model);
  const auto c = count_embeddings(model->embeddings->spec());
  if (json) {
    std::cout << nlohmann::json{{"params", total}, {"emb", c.emb}, {"red", c.red()}, {"emb_untied", c.emb_untied},
                                {"tie", name_of(cfg.tie)}, {"output", name_of(cfg.output)}}.dump()
              << std::endl;
    return 0;
  }
  std::printf("%-28s %14s\n", "", "parameters");
  std::printf("%-28s %14lld\n", "Params (total)", (long long)total);
  std::printf("%-28s %14lld\n", "Emb. (word representations)", (long long)c.emb);
  std::printf("%-28s %14lld\n", "Emb. of the untied model", (long long)c.emb_untied);
  std::printf("%-28s %13.1f%%\n", "Red.", 100 * c.red());
  std::printf("\ntie = %s, output = %s, d_model = %d, vocabularies %d / %d%s%s\n", name_of(cfg.tie), name_of(cfg.output),
              cfg.d_model, cfg.src_vocab_size, cfg.tgt_vocab_size, cfg.joint_vocab ? " (joint)" : "",
              cfg.factored_rank > 0 ? (", factored rank " + std::to_string(cfg.factored_rank)).c_str() : "");
  return 0;
}

}  // namespace yoke::cli
