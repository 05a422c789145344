#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "decode/translator.h"
#include "text/corpus.h"
#include "train/model_store.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/progress.h"

namespace yoke::cli {

int cmd_translate(int argc, char** argv) {
  Command cmd("translate",
              "Translates raw text, one sentence per line, with a trained model; output is detokenized\n"
              "text in input order. Reads --input (plain or .gz) or standard input.");
  ModelOptions model;
  add_model_options(cmd, model, /*with_device=*/true);
  std::string input = "/dev/stdin", output;
  SearchOptions so;
  int batch_tokens = 6000, threads = 0;
  cmd.add_option("--input", input, "source text")->type_name("FILE")->default_str("standard input");
  CLI::Option* output_given =
      cmd.add_option("--output", output, "where to write translations")->type_name("FILE")->default_str("standard output");
  add_value(cmd, "--beam", so.beam, "N", "beam size; 1 = greedy")->capture_default_str();
  add_value(cmd, "--lenpen", so.lenpen, "A", "length penalty: score = log p / length^A")->capture_default_str();
  add_value(cmd, "--max-len-a", so.max_len_a, "A", "at most A·source_length + B target tokens")->capture_default_str();
  add_value(cmd, "--max-len-b", so.max_len_b, "B", "see --max-len-a")->capture_default_str();
  add_value(cmd, "--batch-tokens", batch_tokens, "N", "source tokens × beam per batch")->capture_default_str();
  CLI::Option* threads_given = add_threads_option(cmd, threads);
  if (!cmd.read(argc, argv)) return 0;
  if (*threads_given) at::set_num_threads(threads);
  auto m = load_model_for(Task::translate, model.dir, model.checkpoint, model.device);
  std::vector<std::string> lines = read_lines(input);
  if (so.beam < 1) throw InputError("--beam must be at least 1");
  Progress bar("translate", double(lines.size()), "sent", 30.0);
  std::vector<size_t> cut;
  auto out = translate_text(*m.model, m.src_vocab, m.tgt_vocab, lines, so, batch_tokens,
                            [&](size_t done) { bar.update(double(done)); }, &cut);
  bar.finish();
  const std::string input_name = input == "/dev/stdin" ? "standard input" : input;
  for (size_t i : cut)
    std::cerr << input_name << ":" << i + 1 << ": warning: longer than the model's " << m.model->spec().max_positions - 1
              << " source positions; translated its first " << m.model->spec().max_positions - 1 << " subwords only\n";
  // An --output file appears whole or not at all; standard output is checked when the command
  // ends (cli/main.cpp).
  auto write = [&](std::ostream& os) {
    for (const auto& s : out) os << s << '\n';
  };
  if (*output_given) write_file_atomically(output, write);
  else write(std::cout);
  std::cerr << "translated " << lines.size() << " sentences in " << format_duration(bar.elapsed_s()) << " ("
            << (bar.elapsed_s() > 0 ? double(lines.size()) / bar.elapsed_s() : 0) << " sentences/s) with "
            << m.checkpoint << std::endl;
  return 0;
}

}  // namespace yoke::cli
