#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/options.h"
#include "store/model_store.h"
#include "text/prepare.h"
#include "text/vocab_files.h"
#include "util/error.h"

namespace yoke::cli {

namespace {

// In a model directory (one with a checkpoint or an export), the SentencePiece files must be the
// ones its checkpoint records: a vocabulary copied over later would encode the new data with ids
// the model does not mean.
void check_vocab_is_the_models(const std::string& dir) {
  namespace fs = std::filesystem;
  const auto checkpoint = find_checkpoint(dir);
  if (!checkpoint) return;  // a data set: its files are what they are
  const nlohmann::json meta = read_model_meta(*checkpoint);
  if (!meta.contains("vocab") || !meta.at("vocab").is_object()) return;  // older checkpoints record none
  if (const auto d = vocab_difference(meta.at("vocab"), vocab_checksums(dir)))
    throw input_error((fs::path(dir) / d->file).string(), 0,
                      "--vocab-from: is not the vocabulary " + *checkpoint + " was trained with (" + d->detail + ")");
}

}  // namespace

int cmd_prepare(int argc, char** argv) {
  Command cmd("prepare",
              "Reads parallel text (plain or .gz), trains SentencePiece (one joint model or one per side), and\n"
              "writes the vocabularies, binarized train/valid sets and raw reference copies into --out.\n"
              "Empty pairs and pairs longer than --max-len subwords are dropped and counted, as are those --dedup\n"
              "and --max-ratio drop. The training text is streamed (memory stays bounded for any corpus size) and\n"
              "encoded on every core, with progress on stderr. The directory is\n"
              "built beside --out and moved there at the end; an --out that is not empty is refused unless\n"
              "--force, which replaces it completely.\n\n"
              "example: yoke prepare --train-src train.en.gz --train-tgt train.de.gz --valid-src val.en.gz \\\n"
              "           --valid-tgt val.de.gz --test flickr:test.en.gz:test.de.gz --joint --vocab-size 8000 --out data/ende\n\n"
              "Language models (task = lm) take one monolingual text per split:\n"
              "  yoke prepare --lm --train train.en.gz --valid val.en.gz --test flickr:test.en.gz --vocab-size 8000 --out data/lm-en\n\n"
              "A test set from the training distribution: --hold-out heldout:3000 draws 3000 training pairs (the same\n"
              "for the same --hold-out-seed) and keeps them, and any pair sharing a sentence with one, out of the\n"
              "vocabulary and training (docs/data.md).\n\n"
              "Data for fine-tuning a model (init_from), a back-translation round or another domain is encoded with\n"
              "that model's vocabulary, copied from its directory instead of trained (joint or separate as it has them):\n"
              "  yoke prepare --vocab-from runs/ende --train-src ft.en --train-tgt ft.de --valid-src ... --out data/ft");
  PrepareOptions o;
  std::vector<std::string> tests;
  int max_len = 250, seed = 1;
  o.joint = false;  // separate vocabularies unless --joint
  auto* train_src = cmd.add_option("--train-src", o.train_src, "training source text")->type_name("FILE");
  auto* train_tgt = cmd.add_option("--train-tgt", o.train_tgt, "training target text")->type_name("FILE");
  auto* valid_src = cmd.add_option("--valid-src", o.valid_src, "validation source text")->type_name("FILE");
  auto* valid_tgt = cmd.add_option("--valid-tgt", o.valid_tgt, "validation target text")->type_name("FILE");
  add_repeated(cmd, "--test", tests, "NAME:SRC:TGT", "a test set kept as raw text for scoring (with --lm: NAME:TEXT)");
  std::string hold_out;
  uint64_t hold_out_seed = 1;
  cmd.add_option("--hold-out", hold_out,
                 "N training pairs drawn at random become test set NAME; they, and any training pair sharing a "
                 "sentence with one, stay out of the vocabulary and training. With a --test of the same name, that "
                 "set's pairs come first (one larger test set)")
      ->type_name("NAME:N");
  add_value(cmd, "--hold-out-seed", hold_out_seed, "N", "which pairs --hold-out draws (the same seed, the same pairs)")
      ->capture_default_str();
  cmd.add_flag("--lm", o.lm, "monolingual text for a language model: --train, --valid, --test NAME:TEXT");
  auto* train = cmd.add_option("--train", o.train_tgt, "training text (with --lm)")->type_name("FILE");
  auto* valid = cmd.add_option("--valid", o.valid_tgt, "validation text (with --lm)")->type_name("FILE");
  cmd.add_option("--out", o.out_dir, "data directory to write")->type_name("DIR")->required();
  cmd.add_flag("--force", o.force, "replace --out when it is not empty (a data set prepared before, say)");
  cmd.add_flag("--joint", o.joint, "one vocabulary for both languages (needed for tie = all / src-tgt)");
  auto* joint = cmd.get_option("--joint");
  auto* vocab_from = cmd.add_option("--vocab-from", o.vocab_from,
                                    "encode with the SentencePiece model(s) of this directory (a model's save_dir, an "
                                    "export, a data set), copied instead of trained: what init_from needs")
                         ->type_name("DIR");
  std::vector<CLI::Option*> vocab_training = {
      add_value(cmd, "--vocab-size", o.vocab_size, "N", "vocabulary size (joint, or each side)")->capture_default_str(),
      add_value(cmd, "--src-vocab-size", o.src_vocab_size, "N", "source vocabulary size (separate vocabularies)")
          ->default_str("vocab-size"),
      add_value(cmd, "--tgt-vocab-size", o.tgt_vocab_size, "N", "target vocabulary size (separate vocabularies)")
          ->default_str("vocab-size"),
      cmd.add_option("--model-type", o.model_type, "SentencePiece model type")->type_name("bpe|unigram")->capture_default_str()};
  add_value(cmd, "--max-len", max_len, "N", "drop pairs with more subwords on a side")->capture_default_str();
  vocab_training.push_back(
      add_value(cmd, "--input-sentence-size", o.input_sentence_size, "N",
                "sentences SentencePiece samples (reservoir sampling in one pass) to learn the vocabulary from (0: all, "
                "held in memory)")
          ->capture_default_str());
  vocab_training.push_back(add_value(cmd, "--seed", seed, "N", "seed for SentencePiece's sentence sampling")->capture_default_str());
  for (CLI::Option* opt : vocab_training) vocab_from->excludes(opt);
  add_value(cmd, "--threads", o.threads, "N", "threads for encoding (0: one per core); the output does not depend on it")
      ->capture_default_str();
  cmd.add_flag("--dedup", o.dedup, "drop training pairs that repeat an earlier pair exactly (both sides)");
  add_value(cmd, "--max-ratio", o.max_ratio, "R",
            "drop training pairs whose longer side has more than R times the subwords of the other (0: off; 9 is Moses' "
            "clean-corpus default)")
      ->capture_default_str();
  add_value(cmd, "--shard-size", o.shard_pairs, "PAIRS",
            "training pairs per binarized file: a larger corpus is written as train.000.bin, train.001.bin, ... and "
            "training reads one shard at a time")
      ->capture_default_str();
  add_value(cmd, "--chunk-size", o.chunk_pairs, "PAIRS",
            "training pairs read and encoded at a time (memory against thread efficiency; the output is the same)")
      ->capture_default_str();
  if (!cmd.read(argc, argv)) return 0;
  // Which inputs are required depends on --lm.
  for (const CLI::Option* needed : o.lm ? std::vector<const CLI::Option*>{train, valid}
                                        : std::vector<const CLI::Option*>{train_src, train_tgt, valid_src, valid_tgt})
    cmd.require(needed);
  if (vocab_from->count() > 0 && o.vocab_from.empty())
    throw InputError("--vocab-from is empty: give the directory whose SentencePiece model(s) to use, or leave the "
                     "option out to train new ones");
  if (!o.vocab_from.empty()) {
    // The directory's layout decides unless --joint was given (prepare then checks they agree), and
    // a model directory's files must be those its checkpoint was trained with.
    if (joint->count() == 0) o.joint = std::filesystem::exists(std::filesystem::path(o.vocab_from) / "spm.model");
    check_vocab_is_the_models(o.vocab_from);
  }
  o.max_len = size_t(max_len);
  o.seed = uint64_t(seed);
  // 0 pairs a shard wrote one file a pair; a ratio of NaN, below 0 or below 1 silently meant "off".
  if (o.shard_pairs < 1) throw InputError("--shard-size must be at least 1 pair, got 0");
  if (o.chunk_pairs < 1) throw InputError("--chunk-size must be at least 1 pair, got 0");
  if (!(o.max_ratio == 0 || o.max_ratio >= 1)) {  // NaN fails both
    std::ostringstream got;
    got << o.max_ratio;
    throw InputError("--max-ratio must be 0 (off) or at least 1 (a longer side R times the other), got " +
                     got.str());
  }
  if (!hold_out.empty()) {
    const auto colon = hold_out.rfind(':');
    size_t used = 0;
    long long n = 0;
    try {
      if (colon != std::string::npos) n = std::stoll(hold_out.substr(colon + 1), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (colon == std::string::npos || colon == 0 || used == 0 || used != hold_out.size() - colon - 1 || n < 1)
      throw InputError("yoke prepare: --hold-out expects NAME:N with N at least 1 (e.g. heldout:3000), got '" +
                       hold_out + "'");
    o.hold_out_name = hold_out.substr(0, colon);
    o.hold_out_pairs = uint64_t(n);
    o.hold_out_seed = hold_out_seed;
  }
  for (const auto& t : tests) {
    if (o.lm) {
      const auto a = t.find(':');
      if (a == std::string::npos) throw InputError("yoke prepare --lm: --test expects NAME:TEXT, got '" + t + "'");
      o.test_names.push_back(t.substr(0, a));
      o.tests.emplace_back("", t.substr(a + 1));
      continue;
    }
    const auto a = t.find(':'), b = t.find(':', a == std::string::npos ? a : a + 1);
    if (a == std::string::npos || b == std::string::npos)
      throw InputError("yoke prepare: --test expects NAME:SRC:TGT, got '" + t + "'");
    o.test_names.push_back(t.substr(0, a));
    o.tests.emplace_back(t.substr(a + 1, b - a - 1), t.substr(b + 1));
  }
  prepare_data(o, std::cerr);
  std::cerr << "wrote " << o.out_dir << std::endl;
  return 0;
}

}  // namespace yoke::cli
