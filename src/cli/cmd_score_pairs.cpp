// `yoke score-pairs`: the model's log-probability of given translations (forced decoding), as
// Marian's scorer and fairseq's --score-reference report it; for n-best reranking and data filtering.
#include <iostream>

#include "cli/commands.h"
#include "cli/model_ensemble.h"
#include "cli/options.h"
#include "compat/torch.h"
#include "decode/scoring_pairs.h"
#include "service/translator.h"
#include "text/corpus.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/progress.h"

namespace yoke::cli {

int cmd_score_pairs(int argc, char** argv) {
  Command cmd("score-pairs",
              "Scores given translations with a translation model: for each source line and its target\n"
              "line, log p(target + eos | source) / (subwords + 1)^lenpen (with --lenpen 0, the default,\n"
              "the plain sum of log-probabilities, as Marian's scorer prints; --lenpen 1 is the\n"
              "per-subword mean). One score per line, in input order.\n\n"
              "--word-scores adds each subword's log-probability (the last is eos): SCORE ||| LP LP …\n"
              "--nbest reads --tgt as an n-best list (INDEX ||| TEXT ||| …, as `yoke translate --nbest`\n"
              "writes) and prints each of its lines with the new score appended: LINE ||| SCORE.\n\n"
              "Several --model give an ensemble's score (the weighted mean of the models' log-probabilities).\n\n"
              "example: yoke score-pairs --model runs/ende --src test.en --tgt test.de --lenpen 1");
  EnsembleOptions models;
  add_ensemble_options(cmd, models);
  std::string src_file, tgt_file, output;
  double lenpen = 0;
  bool word_scores = false, nbest = false;
  int batch_tokens = 0, threads = 0;
  cmd.add_option("--src", src_file, "source sentences, raw text (plain or .gz)")->type_name("FILE")->required();
  cmd.add_option("--tgt", tgt_file, "target sentences to score, raw text, line by line with --src")
      ->type_name("FILE")
      ->required();
  CLI::Option* output_given =
      cmd.add_option("--output", output, "where to write the scores")->type_name("FILE")->default_str("standard output");
  add_value(cmd, "--lenpen", lenpen, "A", "score = log p / (subwords + 1)^A")->capture_default_str()->check(in_key_range("lenpen"));
  cmd.add_flag("--word-scores", word_scores, "print each subword's log-probability too");
  cmd.add_flag("--nbest", nbest, "--tgt is an n-best list (INDEX ||| TEXT ||| …)");
  add_value(cmd, "--batch-tokens", batch_tokens, "N", "padded tokens per batch")
      ->default_str(default_batch_tokens_text());
  CLI::Option* threads_given = add_threads_option(cmd, threads);
  if (!cmd.read(argc, argv)) return 0;
  if (*threads_given) compat::set_compute_threads(threads);
  if (batch_tokens < 0) throw InputError("--batch-tokens must be positive");
  TranslatorSource source = translator_source(models);
  source.batch_tokens = batch_tokens;
  const Translator translator(source);
  const auto src_lines = read_lines(src_file), tgt_lines = read_lines(tgt_file);
  Progress bar("score", double(tgt_lines.size()), "sent", 30.0);
  const ScoredPairs pairs = translator.score(src_lines, src_file, tgt_lines, tgt_file, lenpen, nbest,
                                             [&](size_t done) { bar.update(double(done)); });
  const auto& scored = pairs.scores;
  bar.finish();
  auto write = [&](std::ostream& os) {
    for (size_t i = 0; i < scored.size(); ++i) {
      if (nbest) os << pairs.target_lines[i] << " ||| ";
      os << format_score(scored[i].score);
      if (word_scores) {
        os << " |||";
        for (float lp : scored[i].token_log_probs) os << ' ' << format_score(lp);
      }
      os << '\n';
    }
  };
  if (*output_given) write_file_atomically(output, write);
  else write(std::cout);
  std::cerr << "scored " << scored.size() << " pairs in " << format_duration(bar.elapsed_s()) << " with "
            << translator.checkpoints() << std::endl;
  return 0;
}

}  // namespace yoke::cli
