#include "cli/translate_options.h"

#include <cstdlib>

#include "compat/torch.h"
#include "decode/batched_decoding.h"
#include "decode/parallel_batches.h"
#include "util/error.h"

namespace yoke::cli {

void add_decoding_options(CLI::App& app, DecodingValues& values, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    const DecodingOption* o = find_decoding_option(name);
    if (!o) throw std::logic_error("add_decoding_options: '" + name + "' is not in the table");
    std::string flag = "--" + name;
    for (char& c : flag)
      if (c == '_') c = '-';
    // The table's check, worded as CLI11 prints it after the option's name.
    CLI::Validator check(
        [name](std::string& text) -> std::string {
          const double v = std::strtod(text.c_str(), nullptr);  // a number: checked by the validator before
          DecodingValues scratch;
          try {
            set_decoding_option(scratch, name, v);
          } catch (const InputError& e) {
            return std::string(e.what()).substr(name.size() + 1);  // "beam must be …" → "must be …"
          }
          return "";
        },
        o->range);
    app.add_option(flag, decoding_value(values, name), o->help)
        ->type_name(o->kind == OptionKind::whole ? "N" : "X")
        ->capture_default_str()
        ->check(o->kind == OptionKind::whole ? whole_number() : real_number())
        ->check(check);
  }
}

TranslatorSource TranslateOptions::source() const {
  TranslatorSource s = translator_source(models);
  s.shortlist = shortlist;
  s.shortlist_k = shortlist_k;
  s.shortlist_frequent = shortlist_frequent;
  s.batch_tokens = batch_tokens;
  return s;
}


void add_translate_options(Command& cmd, TranslateOptions& o) {
  add_ensemble_options(cmd, o.models);
  cmd.add_option("--input", o.input, "source text")->type_name("FILE")->default_str("standard input");
  o.output_option = cmd.add_option("--output", o.output, "where to write translations")
                 ->type_name("FILE")
                 ->default_str("standard output");
  add_decoding_options(cmd, o.decoding, {"beam", "lenpen", "max_len_a", "max_len_b"});
  add_value(cmd, "--nbest", o.nbest, "N", "print N hypotheses per input with their scores (N ≤ --beam)")->default_str("off");
  cmd.add_flag("--scores", o.scores, "print the score of each translation after it");
  cmd.add_option("--force-decode", o.force_ref, "score these translations of the input (one per line) instead of searching")
      ->type_name("REF");
  cmd.add_option("--prefix-file", o.prefix_file,
                 "line i is the start of input line i's translation (raw text; empty: none); decoding\n"
                 "continues from it and the output includes it")
      ->type_name("FILE");
  cmd.add_option("--constraints", o.constraints_file,
                 "line i holds phrases (raw text, tab-separated; empty: none) that input line i's translation\n"
                 "must contain: lexically constrained beam search (dynamic beam allocation, Post & Vilar 2018)")
      ->type_name("FILE");
  cmd.add_option("--sampling", o.sampling,
                 "draw each token at random instead of searching (back-translation): topk from the\n"
                 "--sampling-topk most likely, topp from the smallest set holding --sampling-topp of the probability")
      ->type_name("M")
      ->check(CLI::IsMember({"none", "topk", "topp"}))
      ->capture_default_str();
  add_value(cmd, "--sampling-topk", o.search.topk, "K", "see --sampling")->capture_default_str();
  add_value(cmd, "--sampling-topp", o.search.topp, "P", "see --sampling")->capture_default_str();
  add_value(cmd, "--temperature", o.search.temperature, "T", "sampling: divide log-probabilities by T (< 1 sharper, > 1 flatter)")
      ->capture_default_str();
  add_value(cmd, "--seed", o.search.seed, "S", "sampling: a sentence's draws depend only on S and its line number, so runs repeat")
      ->capture_default_str();
  o.alignment_option = cmd.add_option("--alignment", o.alignment_text,
                                     "print word alignments from the cross-attention: hard (Pharaoh SRC-TGT links, the default)\n"
                                     "or soft (per target unit, comma-separated weights over the source units)")
                          ->type_name("hard|soft")
                          ->expected(0, 1)
                          ->check(CLI::IsMember({"", "hard", "soft"}));
  cmd.add_option("--alignment-unit", o.alignment_unit, "align words (SentencePiece's ▁ starts one) or subwords")
      ->type_name("U")
      ->check(CLI::IsMember({"words", "subwords"}))
      ->capture_default_str();
  cmd.add_option("--shortlist", o.shortlist,
                 "lexical shortlist from a subword translation table (`yoke pair --data DIR --table TABLE`): the\n"
                 "output layer covers only the --shortlist-k best translations of the batch's source subwords\n"
                 "and the --shortlist-frequent first target subwords (faster; docs/decoding.md)")
      ->type_name("TABLE");
  add_value(cmd, "--shortlist-k", o.shortlist_k, "K", "see --shortlist")->capture_default_str();
  add_value(cmd, "--shortlist-frequent", o.shortlist_frequent, "F", "see --shortlist")->capture_default_str();
  add_value(cmd, "--buffer-size", o.buffer_size, "N", "standard input: at most N sentences read ahead and decoded together")
      ->capture_default_str();
  add_value(cmd, "--batch-tokens", o.batch_tokens, "N",
            "source tokens × beam per batch and thread of a worker (the defaults decoded fastest on\n"
            "the CPU; docs/performance.md, \"Decoding workers\")")
      ->default_str(default_batch_tokens_text(true));
  o.search.workers = 0;
  add_value(cmd, "--workers", o.search.workers, "W",
            "on the CPU, decode W batches at once, each on --threads / W threads, a batch's sentences\n"
            "dealt over its worker's threads (the default: one worker per thread, the fastest for a\n"
            "file; fewer workers finish each batch sooner; docs/performance.md)")
      ->default_str("--threads");
  o.threads_option = add_threads_option(cmd, o.threads);
}

void finish_translate_options(TranslateOptions& o) {
  o.output_given = o.output_option->count() > 0;
  o.threads_given = o.threads_option->count() > 0;
  SearchOptions& so = o.search;
  if (so.workers < 0) throw InputError("--workers must be at least 1");
  if (o.buffer_size < 1) throw InputError("--buffer-size must be at least 1");
  if (o.threads_given) compat::set_compute_threads(o.threads);
  if (so.workers == 0) so.workers = default_workers(o.threads_given ? o.threads : 0);
  so.sampling = o.sampling == "topk" ? Sampling::topk : o.sampling == "topp" ? Sampling::topp : Sampling::none;
  if (so.sampling != Sampling::none) {
    if (o.nbest > 0) throw InputError("--sampling draws one translation per input; it takes no --nbest");
    if (!o.constraints_file.empty()) throw InputError("--constraints needs beam search; it takes no --sampling");
    if (so.topk < 1) throw InputError("--sampling-topk must be at least 1");
    if (!(so.topp > 0 && so.topp <= 1)) throw InputError("--sampling-topp must be in (0, 1]");
    if (!(so.temperature > 0)) throw InputError("--temperature must be positive");
  }
  so.alignment = o.alignment = o.alignment_option->count() > 0;
  o.alignment_format = AlignmentFormat{o.alignment_text == "soft", o.alignment_unit == "words"};
  if (o.nbest < 0) throw InputError("--nbest must not be negative");
  if (o.nbest > o.decoding.beam)
    throw InputError("--nbest " + std::to_string(o.nbest) + " needs --beam " + std::to_string(o.nbest) +
                     " or more (the beam holds the hypotheses)");
  if (!o.force_ref.empty() && o.nbest > 0) throw InputError("--force-decode scores given translations; it takes no --nbest");
  if (o.batch_tokens < 0) throw InputError("--batch-tokens must be positive");
}

}  // namespace yoke::cli
