#include <fstream>
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "decode/translator.h"
#include "text/corpus.h"
#include "train/model_store.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/progress.h"

namespace yoke::cli {

int cmd_translate(int argc, char** argv) {
  Args args("translate",
            "Translates raw text, one sentence per line, with a trained model; output is detokenized\n"
            "text in input order. Reads --input (plain or .gz) or standard input.",
            {{"model", "DIR", "model directory (the save_dir of `yoke train`)"},
             {"checkpoint", "NAME", "checkpoint file in DIR", "checkpoint_best.ykp, else checkpoint_last.ykp"},
             {"device", "D", "cpu, cuda or auto (a GPU when there is one)", "cpu"},
             {"input", "FILE", "source text", "standard input"},
             {"output", "FILE", "where to write translations", "standard output"},
             {"beam", "N", "beam size; 1 = greedy", "5"},
             {"lenpen", "A", "length penalty: score = log p / length^A", "1.0"},
             {"max-len-a", "A", "at most A·source_length + B target tokens", "1.2"},
             {"max-len-b", "B", "see --max-len-a", "10"},
             {"batch-tokens", "N", "source tokens × beam per batch", "6000"},
             {"threads", "N", "CPU threads", "all cores"}});
  if (!args.parse(argc, argv, 2)) return 0;
  if (args.has("threads")) at::set_num_threads(args.get_int("threads"));
  auto m = load_model(args.require("model"), args.has("checkpoint") ? args.get("checkpoint") : "", args.get("device"));
  std::vector<std::string> lines = read_lines(args.has("input") ? args.get("input") : "/dev/stdin");
  SearchOptions so;
  so.beam = args.get_int("beam");
  so.lenpen = args.get_double("lenpen");
  so.max_len_a = args.get_double("max-len-a");
  so.max_len_b = args.get_int("max-len-b");
  if (so.beam < 1) throw InputError("yoke translate: --beam must be at least 1");
  Progress bar("translate", double(lines.size()), "sent", 30.0);
  std::vector<size_t> cut;
  auto out = translate_text(*m.model, m.src_vocab, m.tgt_vocab, lines, so, args.get_int("batch-tokens"),
                            [&](size_t done) { bar.update(double(done)); }, &cut);
  bar.finish();
  const std::string input = args.has("input") ? args.get("input") : "standard input";
  for (size_t i : cut)
    std::cerr << input << ":" << i + 1 << ": warning: longer than the model's " << m.model->spec().max_positions - 1
              << " source positions; translated its first " << m.model->spec().max_positions - 1 << " subwords only\n";
  // An --output file appears whole or not at all; standard output is checked when the command
  // ends (cli/main.cpp).
  auto write = [&](std::ostream& os) {
    for (const auto& s : out) os << s << '\n';
  };
  if (args.has("output")) write_file_atomically(args.get("output"), write);
  else write(std::cout);
  std::cerr << "translated " << lines.size() << " sentences in " << format_duration(bar.elapsed_s()) << " ("
            << (bar.elapsed_s() > 0 ? double(lines.size()) / bar.elapsed_s() : 0) << " sentences/s) with "
            << m.checkpoint << std::endl;
  return 0;
}

}  // namespace yoke::cli
