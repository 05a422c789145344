#include <chrono>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "cli/model_ensemble.h"
#include "cli/options.h"
#include "cli/scoring_input.h"
#include "decode/force_decode.h"
#include "decode/parallel_batches.h"
#include "decode/shortlist.h"
#include "decode/text_io.h"
#include "decode/translator.h"
#include "decode/word_alignment.h"
#include "text/corpus.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/progress.h"

namespace yoke::cli {

namespace {

// Lines of standard input as they come, for streaming: a thread reads them into a queue of at
// most `capacity` lines; next_chunk hands over what has arrived (at least one line, waiting for
// it, unless the input has ended), so a pipe or a person typing gets answers as soon as possible.
class LineStream {
 public:
  explicit LineStream(size_t capacity) : capacity_(capacity), reader_([this] { read(); }) {}
  ~LineStream() {
    // The reader ends at the end of input; when the command stops early it may be blocked in a read.
    if (ended()) reader_.join();
    else reader_.detach();
  }
  // Up to `capacity` lines; empty once the input has ended and every line was handed over.
  std::vector<std::string> next_chunk() {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return !lines_.empty() || ended_; });
    if (lines_.empty() && !error_.empty()) throw InputError(error_);  // after every line before it
    std::vector<std::string> out(std::make_move_iterator(lines_.begin()), std::make_move_iterator(lines_.end()));
    lines_.clear();
    changed_.notify_all();
    return out;
  }

 private:
  bool ended() {
    std::lock_guard<std::mutex> lock(mu_);
    return ended_;
  }
  // One line at a time as it arrives, each at most kMaxLineBytes (text/corpus.h): a stream without
  // line breaks ends with an error instead of filling memory.
  bool next_line(std::string& line, size_t line_no) {
    line.clear();
    std::streambuf* in = std::cin.rdbuf();
    for (;;) {
      const int c = in->sbumpc();
      if (c == std::char_traits<char>::eof()) return !line.empty();
      if (c == '\n') return true;
      line.push_back(char(c));
      if (line.size() > kMaxLineBytes) {
        error_ = "standard input line " + std::to_string(line_no) + ": longer than " +
                 std::to_string(kMaxLineBytes >> 20) + " MiB (a stream without line breaks?): one sentence per line";
        return false;
      }
    }
  }
  void read() {
    size_t line_no = 0;
    for (std::string line; next_line(line, ++line_no);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      std::unique_lock<std::mutex> lock(mu_);
      changed_.wait(lock, [&] { return lines_.size() < capacity_; });
      lines_.push_back(std::move(line));
      changed_.notify_all();
    }
    std::lock_guard<std::mutex> lock(mu_);
    ended_ = true;
    changed_.notify_all();
  }
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::string> lines_;
  bool ended_ = false;
  std::string error_;  // why reading stopped early, raised once the lines before it are taken
  std::thread reader_;
};

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

std::vector<std::string> pieces_of(const Vocab& vocab, const std::vector<int>& ids) {
  std::vector<std::string> out;
  for (int id : ids) out.push_back(vocab.piece(id));
  return out;
}

}  // namespace

int cmd_translate(int argc, char** argv) {
  Command cmd("translate",
              "Translates raw text, one sentence per line, with a trained model or an ensemble; output is\n"
              "detokenized text in input order. Reads --input (plain or .gz, whole) or standard input, which\n"
              "it streams: each translation is written as soon as it and those before it are done.\n\n"
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
            "worker per thread, which on 2 cores decoded 1.6x (fp32) and 2.2x (int8) faster than one\n"
            "batch at a time; docs/performance.md)")
      ->default_str("--threads");
  CLI::Option* threads_given = add_threads_option(cmd, threads);
  if (!cmd.read(argc, argv)) return 0;
  if (so.workers < 0) throw InputError("--workers must be at least 1");
  if (buffer_size < 1) throw InputError("--buffer-size must be at least 1");
  if (*threads_given) at::set_num_threads(threads);
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
  const bool guided = !prefix_file.empty() || !constraints_file.empty();
  // The plain search (greedy or beam, one translation per line) unless an option needs hypotheses.
  const bool hypotheses = nbest > 0 || scores || so.alignment || so.sampling != Sampling::none || guided;
  const size_t limit = m.max_source_subwords();
  size_t translated = 0;
  const auto started = std::chrono::steady_clock::now();
  std::optional<Progress> bar;  // a file's progress; a stream has no known end
  std::function<void(size_t)> on_progress;

  // Translates `lines` (input lines first_index, first_index + 1, …) and writes each line's output
  // to `os` in input order as soon as it and those before it are done.
  auto translate_chunk = [&](const std::vector<std::string>& lines, size_t first_index, std::ostream& os) {
    std::vector<std::vector<int>> sources(lines.size());
    for (size_t i = 0; i < lines.size(); ++i) {
      sources[i] = src_vocab.encode(lines[i]);
      if (sources[i].size() > limit) {  // positions beyond the table do not exist
        sources[i].resize(limit);
        std::cerr << input_name << ":" << first_index + i + 1 << ": warning: longer than the model's " << limit
                  << " source positions; translated its first " << limit << " subwords only\n";
      }
    }
    std::vector<TargetGuide> guides(guided ? lines.size() : 0);
    for (size_t i = 0; i < guides.size(); ++i) {
      if (!prefix_file.empty()) {
        guides[i].prefix = tgt_vocab.encode(line_for(prefix_lines, first_index + i, prefix_file, "--prefix-file"));
        // The target has as many positions as the source; a prefix that fills them leaves no room.
        if (guides[i].prefix.size() >= limit)
          std::cerr << prefix_file << ":" << first_index + i + 1 << ": warning: the prefix has " << guides[i].prefix.size()
                    << " subwords, the model " << limit << " target positions: the output is the prefix cut to "
                    << limit << " subwords, with nothing translated after it\n";
      }
      if (!constraints_file.empty())
        for (const auto& phrase : tab_separated(line_for(constraint_lines, first_index + i, constraints_file, "--constraints")))
          guides[i].constraints.push_back(tgt_vocab.encode(phrase));
    }
    // One input line's output lines, from its best translation or its hypotheses.
    auto plain_text = [&](size_t, const std::vector<int>& best) { return tgt_vocab.decode(best) + '\n'; };
    auto hypotheses_text = [&](size_t i, const std::vector<Hypothesis>& list) {
      // TEXT, then SCORE when asked for, then the alignment: the alignment is always the last field.
      auto line = [&](const Hypothesis& h, bool with_score) {
        std::string text = tgt_vocab.decode(h.tokens);
        if (with_score) text += " ||| " + format_score(h.score);
        if (so.alignment)
          text += " ||| " + format_alignment(h.attention, pieces_of(src_vocab, sources[i]), pieces_of(tgt_vocab, h.tokens),
                                              alignment_format);
        return text + '\n';
      };
      std::string out;
      if (nbest > 0) {
        for (const auto& h : list) out += std::to_string(first_index + i) + " ||| " + line(h, true);
        return out;
      }
      if (list.empty()) return std::string(scores ? " ||| -inf\n" : "\n");
      return line(list.front(), scores);
    };
    std::vector<std::string> texts(lines.size());
    std::vector<bool> ready(lines.size(), false);
    size_t next = 0;  // the first line not written yet
    auto write_ready = [&](const std::vector<size_t>& done, auto&& results, auto&& text_of) {
      for (size_t i : done) {
        texts[i] = text_of(i, results[i]);
        ready[i] = true;
      }
      const size_t before = next;
      for (; next < lines.size() && ready[next]; ++next) os << texts[next];
      if (next != before && streaming) os.flush();
    };
    if (hypotheses) {
      TranslateExtras extras;
      extras.guides = guided ? &guides : nullptr;
      extras.first_index = first_index;
      extras.on_results = [&](const std::vector<size_t>& done, const std::vector<std::vector<Hypothesis>>& results) {
        write_ready(done, results, hypotheses_text);
      };
      translate_ids_nbest(m.ensemble, sources, so, std::max(1, nbest), batch_tokens, on_progress, extras);
    } else {
      // The plain search: the same translations as before streaming existed.
      translate_ids(m.ensemble, sources, so, batch_tokens, on_progress,
                    [&](const std::vector<size_t>& done, const std::vector<std::vector<int>>& results) {
                      write_ready(done, results, plain_text);
                    });
    }
    translated += lines.size();
  };

  auto run = [&](std::ostream& os) {
    if (!streaming) {
      const auto lines = read_lines(input);
      bar.emplace("translate", double(lines.size()), "sent", 30.0);
      on_progress = [&](size_t done) { bar->update(double(done)); };
      translate_chunk(lines, 0, os);
      bar->finish();
      return;
    }
    LineStream stream{size_t(buffer_size)};
    for (auto chunk = stream.next_chunk(); !chunk.empty(); chunk = stream.next_chunk())
      translate_chunk(chunk, translated, os);
  };
  // An --output file appears whole or not at all; standard output is checked when the command
  // ends (cli/main.cpp).
  if (*output_given) write_file_atomically(output, run);
  else run(std::cout);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cerr << "translated " << translated << " sentences in " << format_duration(seconds) << " ("
            << (seconds > 0 ? double(translated) / seconds : 0) << " sentences/s) with "
            << m.checkpoints() << (m.first().int8 ? (m.first().model->uses_int8() ? " (int8)" : " (int8 weights, fp32 products)") : "")
            << std::endl;
  return 0;
}

}  // namespace yoke::cli
