#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "cli/line_stream.h"
#include "cli/model_ensemble.h"
#include "cli/options.h"
#include "config/decoding_options.h"
#include "decode/force_decode.h"
#include "decode/scoring_pairs.h"
#include "decode/parallel_batches.h"
#include "decode/shortlist.h"
#include "decode/translation_service.h"
#include "decode/translator.h"
#include "model/fp32_kernel.h"
#include "model/int8_kernel.h"
#include "text/corpus.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/progress.h"

namespace yoke::cli {

namespace {

// Which kernel multiplied an int8 model's weights, and how it was chosen (model/int8_kernel.h).
std::string int8_products() {
  const std::string reason = int8_kernel_reason();
  return reason.empty() ? "fp32 (no int8 kernel in this LibTorch, or on a GPU)" : reason;
}

// Which product multiplied an fp32 model's weights on the CPU (model/fp32_kernel.h); "" where
// none was chosen (a GPU, a build without oneDNN's product).
std::string fp32_products() {
  const std::string reason = fp32_kernel_reason();
  return reason.empty() ? "" : " (fp32 products in " + reason + ")";
}

// Lines of an --input file read and decoded together: enough to sort into full batches (a 1000-line
// test set is one window, as it was read whole before), few enough that memory does not grow with
// the file (about 67 bytes of memory a byte of input when a whole 18 MB file was held).
constexpr size_t kFileWindow = 10000;

// Line `index` (0-based) of a file that must have one line per input line.
const std::string& line_for(const std::vector<std::string>& lines, size_t index, const std::string& file,
                            const std::string& option) {
  if (index >= lines.size())
    throw InputError(file + " (" + option + ") has " + std::to_string(lines.size()) + " lines; input line " +
                     std::to_string(index + 1) + " has none");
  return lines[index];
}

// The phrases of one line of a --constraints file: tab-separated.
std::vector<std::string> tab_separated(const std::string& line) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t tab; (tab = line.find('\t', at)) != std::string::npos; at = tab + 1) out.push_back(line.substr(at, tab - at));
  out.push_back(line.substr(at));
  out.erase(std::remove_if(out.begin(), out.end(), [](const std::string& s) {
              return s.find_first_not_of(" ") == std::string::npos;
            }),
            out.end());
  return out;
}

// --help's text for a decoding option: its table's (config/decoding_options.h), which the server
// and Python show too; the option names there are the config keys' (max_len_a for --max-len-a).
std::string option_help(const std::string& name) { return find_decoding_option(name)->help; }

}  // namespace

int cmd_translate(int argc, char** argv) {
  Command cmd("translate",
              "Translates raw text, one sentence per line, with a trained model or an ensemble; output is\n"
              "detokenized text in input order. Reads --input (plain or .gz; 10000 lines at a time, so memory\n"
              "does not grow with the file) or standard input, which it streams: each translation is written as\n"
              "soon as it and those before it are done.\n\n"
              "--nbest N prints N hypotheses per input, best first, as fairseq and Marian do:\n"
              "  INDEX ||| TEXT ||| SCORE      (INDEX counts input lines from 0)\n"
              "--scores prints the best one's score after it: TEXT ||| SCORE. SCORE is what the\n"
              "search ranks by: log p(translation + eos | source) / (subwords + 1)^lenpen.\n"
              "--alignment adds word alignments as the last field: TEXT ||| 0-0 1-2 2-1 (SRC-TGT).\n"
              "--force-decode REF scores the given translations instead of searching (REF ||| SCORE);\n"
              "`yoke score-pairs` gives per-subword scores too. docs/decoding.md shows every option.\n\n"
              "example: yoke translate --model runs/a --model runs/b --beam 5 < test.en > test.hyp");
  EnsembleOptions models;
  add_ensemble_options(cmd, models);
  std::string input = "/dev/stdin", output;
  SearchOptions so;
  int batch_tokens = 0, threads = 0;
  cmd.add_option("--input", input, "source text")->type_name("FILE")->default_str("standard input");
  CLI::Option* output_given =
      cmd.add_option("--output", output, "where to write translations")->type_name("FILE")->default_str("standard output");
  add_value(cmd, "--beam", so.beam, "N", option_help("beam"))->capture_default_str()->check(in_key_range("beam"));
  add_value(cmd, "--lenpen", so.lenpen, "A", option_help("lenpen"))
      ->capture_default_str()
      ->check(in_key_range("lenpen"));
  add_value(cmd, "--max-len-a", so.max_len_a, "A", option_help("max_len_a"))
      ->capture_default_str()
      ->check(in_key_range("max_len_a"));
  add_value(cmd, "--max-len-b", so.max_len_b, "B", option_help("max_len_b"))->capture_default_str()->check(in_key_range("max_len_b"));
  int nbest = 0;
  bool scores = false;
  std::string force_ref, prefix_file, constraints_file, sampling = "none", alignment, alignment_unit = "words";
  add_value(cmd, "--nbest", nbest, "N", "print N hypotheses per input with their scores (N ≤ --beam)")
      ->default_str("off");
  cmd.add_flag("--scores", scores, "print the score of each translation after it");
  cmd.add_option("--force-decode", force_ref, "score these translations of the input (one per line) instead of searching")
      ->type_name("REF");
  cmd.add_option("--prefix-file", prefix_file,
                 "line i is the start of input line i's translation (raw text; empty: none); decoding\n"
                 "continues from it and the output includes it")
      ->type_name("FILE");
  cmd.add_option("--constraints", constraints_file,
                 "line i holds phrases (raw text, tab-separated; empty: none) that input line i's translation\n"
                 "must contain: lexically constrained beam search (dynamic beam allocation, Post & Vilar 2018)")
      ->type_name("FILE");
  cmd.add_option("--sampling", sampling,
                 "draw each token at random instead of searching (back-translation): topk from the\n"
                 "--sampling-topk most likely, topp from the smallest set holding --sampling-topp of the probability")
      ->type_name("M")
      ->check(CLI::IsMember({"none", "topk", "topp"}))
      ->capture_default_str();
  add_value(cmd, "--sampling-topk", so.topk, "K", "see --sampling")->capture_default_str();
  add_value(cmd, "--sampling-topp", so.topp, "P", "see --sampling")->capture_default_str();
  add_value(cmd, "--temperature", so.temperature, "T",
            "sampling: divide log-probabilities by T (< 1 sharper, > 1 flatter)")
      ->capture_default_str();
  add_value(cmd, "--seed", so.seed, "S",
            "sampling: a sentence's draws depend only on S and its line number, so runs repeat")
      ->capture_default_str();
  CLI::Option* alignment_given =
      cmd.add_option("--alignment", alignment,
                     "print word alignments from the cross-attention: hard (Pharaoh SRC-TGT links, the default)\n"
                     "or soft (per target unit, comma-separated weights over the source units)")
          ->type_name("hard|soft")
          ->expected(0, 1)
          ->check(CLI::IsMember({"", "hard", "soft"}));
  cmd.add_option("--alignment-unit", alignment_unit, "align words (SentencePiece's ▁ starts one) or subwords")
      ->type_name("U")
      ->check(CLI::IsMember({"words", "subwords"}))
      ->capture_default_str();
  std::string shortlist_table;
  int shortlist_k = 50, shortlist_frequent = 100;
  cmd.add_option("--shortlist", shortlist_table,
                 "lexical shortlist from a subword translation table (`yoke pair --data DIR --table TABLE`): the\n"
                 "output layer covers only the --shortlist-k best translations of the batch's source subwords\n"
                 "and the --shortlist-frequent first target subwords (faster; docs/decoding.md)")
      ->type_name("TABLE");
  add_value(cmd, "--shortlist-k", shortlist_k, "K", "see --shortlist")->capture_default_str();
  add_value(cmd, "--shortlist-frequent", shortlist_frequent, "F", "see --shortlist")->capture_default_str();
  int buffer_size = 1000;
  add_value(cmd, "--buffer-size", buffer_size, "N",
            "standard input: at most N sentences read ahead and decoded together")
      ->capture_default_str();
  add_value(cmd, "--batch-tokens", batch_tokens, "N",
            "source tokens × beam per batch (on the CPU, batches of 1000–2000 decoded faster than\n"
            "larger ones; docs/performance.md)")
      ->default_str(default_batch_tokens_text());
  so.workers = 0;
  add_value(cmd, "--workers", so.workers, "W",
            "on the CPU, decode W batches at once, each on --threads / W threads (the default: one\n"
            "worker per thread, which on 2 cores decoded 1.4x (fp32) and 2.4x (int8) faster than one\n"
            "batch at a time; docs/performance.md)")
      ->default_str("--threads");
  CLI::Option* threads_given = add_threads_option(cmd, threads);
  if (!cmd.read(argc, argv)) return 0;
  if (so.workers < 0) throw InputError("--workers must be at least 1");
  if (buffer_size < 1) throw InputError("--buffer-size must be at least 1");
  if (*threads_given) compat::set_compute_threads(threads);
  if (so.workers == 0) so.workers = default_workers(*threads_given ? threads : 0);
  so.sampling = sampling == "topk" ? Sampling::topk : sampling == "topp" ? Sampling::topp : Sampling::none;
  if (so.sampling != Sampling::none) {
    if (nbest > 0) throw InputError("--sampling draws one translation per input; it takes no --nbest");
    if (!constraints_file.empty()) throw InputError("--constraints needs beam search; it takes no --sampling");
    if (so.topk < 1) throw InputError("--sampling-topk must be at least 1");
    if (!(so.topp > 0 && so.topp <= 1)) throw InputError("--sampling-topp must be in (0, 1]");
    if (!(so.temperature > 0)) throw InputError("--temperature must be positive");
  }
  so.alignment = alignment_given->count() > 0;
  const AlignmentFormat alignment_format{alignment == "soft", alignment_unit == "words"};
  if (nbest < 0) throw InputError("--nbest must not be negative");
  if (nbest > so.beam)
    throw InputError("--nbest " + std::to_string(nbest) + " needs --beam " + std::to_string(nbest) +
                     " or more (the beam holds the hypotheses)");
  if (batch_tokens < 0) throw InputError("--batch-tokens must be positive");
  auto m = load_ensemble(models);
  const auto& src_vocab = m.first().src_vocab;
  const auto& tgt_vocab = m.first().tgt_vocab;
  if (batch_tokens == 0) batch_tokens = default_batch_tokens(*m.first().model);
  const bool streaming = input == "/dev/stdin" || input == "-";
  const std::string input_name = streaming ? "standard input" : input;
  if (!force_ref.empty()) {
    if (nbest > 0) throw InputError("--force-decode scores given translations; it takes no --nbest");
    const auto lines = read_lines(input);
    auto pairs = encode_scoring_pairs(*m.first().model, src_vocab, tgt_vocab, lines, input_name, read_lines(force_ref), force_ref);
    auto scored = force_decode(m.ensemble, pairs.sources, pairs.targets, so.lenpen, batch_tokens);
    auto write = [&](std::ostream& os) {
      for (size_t i = 0; i < scored.size(); ++i) os << pairs.target_lines[i] << " ||| " << format_score(scored[i].score) << '\n';
    };
    if (*output_given) write_file_atomically(output, write);
    else write(std::cout);
    return 0;
  }
  std::optional<Shortlist> shortlist;
  if (!shortlist_table.empty()) {
    shortlist.emplace(Shortlist::from_table(shortlist_table, src_vocab, tgt_vocab, shortlist_k, shortlist_frequent));
    so.shortlist = &*shortlist;
  }
  const std::vector<std::string> prefix_lines = prefix_file.empty() ? std::vector<std::string>{} : read_lines(prefix_file);
  const std::vector<std::string> constraint_lines =
      constraints_file.empty() ? std::vector<std::string>{} : read_lines(constraints_file);
  const TranslationService service(m.ensemble, src_vocab, tgt_vocab, batch_tokens);
  const size_t limit = service.max_source_subwords();
  size_t translated = 0;
  const auto started = std::chrono::steady_clock::now();

  // One input line's output: its best translation, or its n-best list; TEXT, then SCORE when asked
  // for, then the alignment, always the last field.
  auto output_of = [&](const Translation& t) {
    auto line = [&](const TranslatedHypothesis& h, bool with_score) {
      std::string text = h.text;
      if (with_score) text += " ||| " + format_score(h.score);
      if (so.alignment) text += " ||| " + service.alignment_text(t, h, alignment_format);
      return text + '\n';
    };
    std::string out;
    if (nbest > 0) {
      for (const auto& h : t.hypotheses) out += std::to_string(t.index) + " ||| " + line(h, true);
      return out;
    }
    if (t.hypotheses.empty()) return std::string(scores ? " ||| -inf\n" : "\n");
    return line(t.hypotheses.front(), scores);
  };
  // Translates `lines` (input lines first_index, first_index + 1, …) and writes each line's output
  // to `os` in input order as soon as it and those before it are done.
  auto translate_chunk = [&](const std::vector<std::string>& lines, size_t first_index, std::ostream& os,
                             const std::function<void(size_t)>& on_batch) {
    TranslationRequest request;
    request.lines = lines;
    request.search = so;
    request.nbest = std::max(1, nbest);
    request.scores = scores || nbest > 0;  // an n-best list prints every score
    request.first_index = first_index;
    for (size_t i = 0; i < lines.size() && !prefix_file.empty(); ++i)
      request.prefixes.push_back(line_for(prefix_lines, first_index + i, prefix_file, "--prefix-file"));
    for (size_t i = 0; i < lines.size() && !constraints_file.empty(); ++i)
      request.constraints.push_back(tab_separated(line_for(constraint_lines, first_index + i, constraints_file, "--constraints")));
    TranslationProgress progress;
    progress.on_batch = on_batch;
    progress.on_ready = [&](const Translation& t) {
      if (t.cut() || t.prefix_subwords >= limit) clear_progress_line();
      if (t.cut())
        std::cerr << input_name << ":" << t.index + 1 << ": warning: longer than the model's " << limit
                  << " source positions; translated its first " << limit << " subwords only\n";
      if (t.prefix_subwords >= limit)
        std::cerr << prefix_file << ":" << t.index + 1 << ": warning: the prefix has " << t.prefix_subwords
                  << " subwords, the model " << limit << " target positions: the output is the prefix cut to "
                  << limit << " subwords, with nothing translated after it\n";
      os << output_of(t);
      if (streaming) os.flush();
    };
    service.translate(request, progress);
    translated += lines.size();
  };

  auto run = [&](std::ostream& os) {
    if (!streaming) {
      // A file is read a window of lines at a time, each sorted into batches by length and written
      // in input order: memory stays flat whatever the file's size (bench/translate_memory.sh).
      LineReader reader(input);
      // Translations written to a terminal are their own progress: a bar there would run into them.
      std::optional<Progress> bar;
      if (*output_given || !::isatty(STDOUT_FILENO)) bar.emplace("translate", double(reader.file_bytes()) / 1e6, "MB", 30.0);
      std::vector<std::string> window;
      for (std::string line;;) {
        window.clear();
        while (window.size() < kFileWindow && reader.next(line)) window.push_back(std::move(line));
        if (window.empty()) break;
        translate_chunk(window, translated, os, [&](size_t) {
          if (bar) bar->update(double(reader.bytes_read()) / 1e6, std::to_string(translated) + " sentences");
        });
      }
      if (bar) bar->finish(std::to_string(translated) + " sentences");
      return;
    }
    LineStream stream{size_t(buffer_size)};
    for (auto chunk = stream.next_chunk(); !chunk.empty(); chunk = stream.next_chunk())
      translate_chunk(chunk, translated, os, {});
  };
  // An --output file appears whole or not at all; standard output is checked when the command
  // ends (cli/main.cpp).
  if (*output_given) write_file_atomically(output, run);
  else run(std::cout);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cerr << "translated " << translated << " sentences in " << format_duration(seconds) << " ("
            << (seconds > 0 ? double(translated) / seconds : 0) << " sentences/s) with "
            << m.checkpoints()
            << (m.first().int8 ? " (int8 weights; products in " + int8_products() + ")" : fp32_products())
            << std::endl;
  return 0;
}

}  // namespace yoke::cli
