#include <iostream>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/scoring_input.h"
#include "decode/force_decode.h"
#include "decode/parallel_batches.h"
#include "decode/text_io.h"
#include "decode/translator.h"
#include "text/corpus.h"
#include "store/model_store.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/progress.h"

namespace yoke::cli {

int cmd_translate(int argc, char** argv) {
  Command cmd("translate",
              "Translates raw text, one sentence per line, with a trained model; output is detokenized\n"
              "text in input order. Reads --input (plain or .gz) or standard input.\n\n"
              "--nbest N prints N hypotheses per input, best first, as fairseq and Marian do:\n"
              "  INDEX ||| TEXT ||| SCORE      (INDEX counts input lines from 0)\n"
              "--scores prints the best one's score after it: TEXT ||| SCORE. SCORE is what the\n"
              "search ranks by: log p(translation + eos | source) / (subwords + 1)^lenpen.\n"
              "--force-decode REF scores the given translations instead of searching (REF ||| SCORE);\n"
              "`yoke score-pairs` gives per-subword scores too.");
  ModelOptions model;
  add_model_options(cmd, model, /*with_device=*/true);
  std::string input = "/dev/stdin", output;
  SearchOptions so;
  int batch_tokens = 0, threads = 0;
  cmd.add_option("--input", input, "source text")->type_name("FILE")->default_str("standard input");
  CLI::Option* output_given =
      cmd.add_option("--output", output, "where to write translations")->type_name("FILE")->default_str("standard output");
  add_value(cmd, "--beam", so.beam, "N", "beam size; 1 = greedy")->capture_default_str()->check(in_key_range("beam"));
  add_value(cmd, "--lenpen", so.lenpen, "A", "length penalty: score = log p / length^A")
      ->capture_default_str()
      ->check(in_key_range("lenpen"));
  add_value(cmd, "--max-len-a", so.max_len_a, "A", "at most A·source_length + B target tokens")
      ->capture_default_str()
      ->check(in_key_range("max_len_a"));
  add_value(cmd, "--max-len-b", so.max_len_b, "B", "see --max-len-a")->capture_default_str()->check(in_key_range("max_len_b"));
  int nbest = 0;
  bool scores = false;
  std::string force_ref;
  add_value(cmd, "--nbest", nbest, "N", "print N hypotheses per input with their scores (N ≤ --beam)")
      ->default_str("off");
  cmd.add_flag("--scores", scores, "print the score of each translation after it");
  cmd.add_option("--force-decode", force_ref, "score these translations of the input (one per line) instead of searching")
      ->type_name("REF");
  add_value(cmd, "--batch-tokens", batch_tokens, "N",
            "source tokens × beam per batch (on the CPU, batches of 1000–2000 decoded faster than\n"
            "larger ones; docs/performance.md)")
      ->default_str(default_batch_tokens_text());
  so.workers = 0;
  add_value(cmd, "--workers", so.workers, "W",
            "on the CPU, decode W batches at once, each on --threads / W threads (the default: one\n"
            "worker per thread, which on 2 cores decoded 1.6x (fp32) and 2.2x (int8) faster than one\n"
            "batch at a time; docs/performance.md)")
      ->default_str("--threads");
  CLI::Option* threads_given = add_threads_option(cmd, threads);
  if (!cmd.read(argc, argv)) return 0;
  if (so.workers < 0) throw InputError("--workers must be at least 1");
  if (*threads_given) at::set_num_threads(threads);
  if (so.workers == 0) so.workers = default_workers(*threads_given ? threads : 0);
  auto m = load_model_for(Task::translate, model.dir, model.checkpoint, model.device);
  std::vector<std::string> lines = read_lines(input);
  if (nbest < 0) throw InputError("--nbest must not be negative");
  if (nbest > so.beam)
    throw InputError("--nbest " + std::to_string(nbest) + " needs --beam " + std::to_string(nbest) +
                     " or more (the beam holds the hypotheses)");
  if (batch_tokens < 0) throw InputError("--batch-tokens must be positive");
  if (batch_tokens == 0) batch_tokens = default_batch_tokens(*m.model);
  const std::string input_name = input == "/dev/stdin" ? "standard input" : input;
  if (!force_ref.empty()) {
    if (nbest > 0) throw InputError("--force-decode scores given translations; it takes no --nbest");
    auto pairs = encode_scoring_pairs(*m.model, m.src_vocab, m.tgt_vocab, lines, input_name, read_lines(force_ref), force_ref);
    auto scored = force_decode(*m.model, pairs.sources, pairs.targets, so.lenpen, batch_tokens);
    auto write = [&](std::ostream& os) {
      for (size_t i = 0; i < scored.size(); ++i) os << pairs.target_lines[i] << " ||| " << format_score(scored[i].score) << '\n';
    };
    if (*output_given) write_file_atomically(output, write);
    else write(std::cout);
    return 0;
  }
  Progress bar("translate", double(lines.size()), "sent", 30.0);
  std::vector<size_t> cut;
  std::vector<std::string> out;
  std::vector<std::vector<Hypothesis>> lists;
  if (nbest > 0 || scores) {
    lists = translate_ids_nbest(*m.model, encode_sources(*m.model, m.src_vocab, lines, &cut), so, std::max(1, nbest),
                                batch_tokens, [&](size_t done) { bar.update(double(done)); });
  } else {
    out = translate_text(*m.model, m.src_vocab, m.tgt_vocab, lines, so, batch_tokens,
                         [&](size_t done) { bar.update(double(done)); }, &cut);
  }
  bar.finish();
  for (size_t i : cut)
    std::cerr << input_name << ":" << i + 1 << ": warning: longer than the model's " << m.model->spec().max_positions - 1
              << " source positions; translated its first " << m.model->spec().max_positions - 1 << " subwords only\n";
  // An --output file appears whole or not at all; standard output is checked when the command
  // ends (cli/main.cpp).
  auto write = [&](std::ostream& os) {
    for (const auto& s : out) os << s << '\n';
    for (size_t i = 0; i < lists.size(); ++i) {
      const auto texts = as_text(m.tgt_vocab, lists[i]);
      if (nbest == 0) {  // --scores alone
        os << (texts.empty() ? "" : texts.front().text) << " ||| "
           << (texts.empty() ? "-inf" : format_score(texts.front().score)) << '\n';
        continue;
      }
      for (const auto& h : texts) os << i << " ||| " << h.text << " ||| " << format_score(h.score) << '\n';
    }
  };
  if (*output_given) write_file_atomically(output, write);
  else write(std::cout);
  std::cerr << "translated " << lines.size() << " sentences in " << format_duration(bar.elapsed_s()) << " ("
            << (bar.elapsed_s() > 0 ? double(lines.size()) / bar.elapsed_s() : 0) << " sentences/s) with "
            << m.checkpoint << (m.int8 ? (m.model->uses_int8() ? " (int8)" : " (int8 weights, fp32 products)") : "")
            << std::endl;
  return 0;
}

}  // namespace yoke::cli
