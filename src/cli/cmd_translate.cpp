// `yoke translate`: raw text in, translations out, through service/translator.h; the options are
// cli/translate_options.h, the printed lines cli/translation_lines.h.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "cli/guide_files.h"
#include "cli/line_stream.h"
#include "cli/options.h"
#include "cli/translate_options.h"
#include "cli/translation_lines.h"
#include "decode/scoring_pairs.h"
#include "service/translator.h"
#include "text/corpus.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/progress.h"

namespace yoke::cli {

namespace {

// Lines of an --input file read and decoded together: enough to sort into full batches (a 1000-line
// test set is one window, as it was read whole before), few enough that memory does not grow with
// the file (about 67 bytes of memory a byte of input when a whole 18 MB file was held).
constexpr size_t kFileWindow = 10000;

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
  TranslateOptions o;
  add_translate_options(cmd, o);
  if (!cmd.read(argc, argv)) return 0;
  finish_translate_options(o);
  const Translator translator(o.source());
  const std::string input_name = o.streaming() ? "standard input" : o.input;
  // Writes to --output atomically (it appears whole or not at all), else to standard output
  // (checked when the command ends, cli/main.cpp).
  auto write_out = [&](const std::function<void(std::ostream&)>& write) {
    if (o.output_given) write_file_atomically(o.output, write);
    else write(std::cout);
  };
  if (!o.force_ref.empty()) {
    const auto scored = translator.score(read_lines(o.input), input_name, read_lines(o.force_ref), o.force_ref, o.decoding.lenpen);
    write_out([&](std::ostream& os) {
      for (size_t i = 0; i < scored.scores.size(); ++i)
        os << scored.target_lines[i] << " ||| " << format_score(scored.scores[i].score) << '\n';
    });
    return 0;
  }
  const GuideFiles guides(o.prefix_file, o.constraints_file);
  const size_t limit = translator.service().max_source_subwords();
  const OutputFields fields{o.nbest, o.scores, o.alignment, o.alignment_format};
  size_t translated = 0;
  const auto started = std::chrono::steady_clock::now();

  // Translates `lines` (input lines first_index, first_index + 1, …) and writes each line's output
  // to `os` in input order as soon as it and those before it are done.
  auto translate_chunk = [&](const std::vector<std::string>& lines, size_t first_index, std::ostream& os,
                             const std::function<void(size_t)>& on_batch) {
    TranslationRequest request;
    request.lines = lines;
    request.search = o.search;
    set_decoding_values(request, o.decoding);
    request.nbest = std::max(1, o.nbest);
    request.scores = o.scores || o.nbest > 0;  // an n-best list prints every score
    request.first_index = first_index;
    guides.guide(request, first_index);
    TranslationProgress progress;
    progress.on_batch = on_batch;
    progress.on_ready = [&](const Translation& t) {
      if (t.cut() || t.prefix_subwords >= limit) clear_progress_line();
      if (t.cut())
        std::cerr << input_name << ":" << t.index + 1 << ": warning: longer than the model's " << limit
                  << " source positions; translated its first " << limit << " subwords only\n";
      if (t.prefix_subwords >= limit)
        std::cerr << o.prefix_file << ":" << t.index + 1 << ": warning: the prefix has " << t.prefix_subwords
                  << " subwords, the model " << limit << " target positions: the output is the prefix cut to "
                  << limit << " subwords, with nothing translated after it\n";
      os << translation_lines(t, translator.service(), fields);
      if (o.streaming()) os.flush();
    };
    translator.translate(request, progress);
    translated += lines.size();
  };

  write_out([&](std::ostream& os) {
    if (o.streaming()) {
      LineStream stream{size_t(o.buffer_size)};
      for (auto chunk = stream.next_chunk(); !chunk.empty(); chunk = stream.next_chunk())
        translate_chunk(chunk, translated, os, {});
      return;
    }
    // A file is read a window of lines at a time, each sorted into batches by length and written
    // in input order: memory stays flat whatever the file's size (bench/translate_memory.sh).
    LineReader reader(o.input);
    // Translations written to a terminal are their own progress: a bar there would run into them.
    std::optional<Progress> bar;
    if (o.output_given || !::isatty(STDOUT_FILENO)) bar.emplace("translate", double(reader.file_bytes()) / 1e6, "MB", 30.0);
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
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cerr << "translated " << translated << " sentences in " << format_duration(seconds) << " ("
            << (seconds > 0 ? double(translated) / seconds : 0) << " sentences/s) with " << translator.checkpoints()
            << translator.products() << std::endl;
  return 0;
}

}  // namespace yoke::cli
