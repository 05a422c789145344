// `yoke translate`'s command line: the models (cli/model_ensemble.h), the decoding options of
// config/decoding_options.h's table (--beam, --lenpen, --max-len-a, --max-len-b, declared from it),
// and the command's own: input and output, n-best and scores, forced decoding, prefixes,
// constraints, sampling, alignments, the shortlist, batching and threads.
#pragma once
#include <string>

#include "cli/model_ensemble.h"
#include "config/decoding_options.h"
#include "decode/search.h"
#include "service/translator.h"
#include "decode/word_alignment.h"

namespace yoke::cli {

struct TranslateOptions {
  EnsembleOptions models;
  std::string input = "/dev/stdin", output;
  bool output_given = false;
  DecodingValues decoding;  // beam, lenpen, max_len_a, max_len_b (nbest is --nbest below: 0 prints one line)
  SearchOptions search;     // sampling, alignment and workers; the rest comes from `decoding`
  int nbest = 0;
  bool scores = false;
  std::string force_ref, prefix_file, constraints_file;
  bool alignment = false;
  AlignmentFormat alignment_format;
  std::string shortlist;
  int shortlist_k = 50, shortlist_frequent = 100;
  int buffer_size = 1000, batch_tokens = 0, threads = 0;
  bool threads_given = false;
  // As typed; finish_translate_options turns them into `search`, `alignment_format` and the flags above.
  std::string sampling = "none", alignment_text, alignment_unit = "words";
  CLI::Option *output_option = nullptr, *alignment_option = nullptr, *threads_option = nullptr;

  bool streaming() const { return input == "/dev/stdin" || input == "-"; }
  TranslatorSource source() const;  // the models, weights, shortlist and batch size
};

// Declares every option on `cmd`, bound to `o`.
void add_translate_options(Command& cmd, TranslateOptions& o);

// After parsing: the checks across options (InputError naming them), sets threads and workers.
void finish_translate_options(TranslateOptions& o);

// The decoding options of the table as `yoke translate` takes them, "--max-len-a" for max_len_a:
// bound to `values`, each checked by set_decoding_option (the message names the option).
void add_decoding_options(CLI::App& app, DecodingValues& values, const std::vector<std::string>& names);

}  // namespace yoke::cli
