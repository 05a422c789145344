#include "text/vocab.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <memory>
#include <filesystem>
#include <limits>
#include <regex>
#include <stdexcept>
#include <unordered_map>

#include "text/corpus.h"
#include "text/spm_api.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/regular_file.h"

namespace yoke {
namespace {

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out.empty() ? "<no input>" : out;
}

void check_options(const VocabTrainOptions& opts) {
  if (opts.model_type != "bpe" && opts.model_type != "unigram")
    throw InputError("model_type: unknown value '" + opts.model_type +
                     "' (valid values: bpe, unigram)");
  if (opts.vocab_size < 8)
    throw InputError("vocab_size: " + std::to_string(opts.vocab_size) +
                     " is too small (need at least the 4 special pieces and some characters)");
  if (opts.model_prefix.empty()) throw InputError("vocab training: model_prefix is empty");
}

std::unordered_map<std::string, std::string> trainer_args(const VocabTrainOptions& opts) {
  return {
      // No model_prefix: the model comes back in memory and run_trainer writes it.
      {"vocab_size", std::to_string(opts.vocab_size)},
      {"model_type", opts.model_type},
      {"character_coverage", std::to_string(opts.character_coverage)},
      {"input_sentence_size", std::to_string(opts.input_sentence_size)},
      {"shuffle_input_sentence", "true"},  // sample the whole corpus, not just its head
      {"num_threads", std::to_string(std::max(1, std::min(128, opts.num_threads)))},
      {"pad_id", "0"},
      {"unk_id", "1"},
      {"bos_id", "2"},
      {"eos_id", "3"},
      {"pad_piece", "<pad>"},
      {"unk_piece", "<unk>"},
      {"bos_piece", "<s>"},
      {"eos_piece", "</s>"},
      {"hard_vocab_limit", "true"},  // the model's embedding size must be what was asked for
      {"minloglevel", "2"},          // errors only; the caller logs a summary
  };
}

// SentencePiece reserves seed 0xFFFFFFFF for "seed from random_device".
unsigned int spm_seed(uint64_t seed) {
  auto s = static_cast<unsigned int>(seed ^ (seed >> 32));
  return s == std::numeric_limits<unsigned int>::max() ? 0u : s;
}

// SentencePiece reports "Vocabulary size too high (N). Please set it to a value <= M." when the
// text has too few distinct subwords; turn that into advice with the largest possible size.
[[noreturn]] void throw_training_error(const VocabTrainOptions& opts, const std::string& msg) {
  std::string text = "cannot train SentencePiece vocabulary: " + msg;
  std::smatch m;
  if (std::regex_search(msg, m, std::regex("Vocabulary size.*<= *([0-9]+)")))
    text = "vocab_size " + std::to_string(opts.vocab_size) +
           " is too large for this training text, which yields at most " + m[1].str() +
           " pieces; lower vocab_size to " + m[1].str() + " or less, or add training text";
  else if (msg.find("required_chars") != std::string::npos)
    text += " (hint: raise vocab_size or lower character_coverage)";
  throw input_error(join(opts.input_files), 0, text);
}

// `next` may throw (a read error names its file): the exception is kept while SentencePiece
// unwinds on its own terms (the plugin boundary carries no exceptions) and rethrown here.
void run_trainer(const VocabTrainOptions& opts, const SentenceSource& next) {
  check_options(opts);
  size_t total = 0;
  std::exception_ptr failure;
  const std::function<bool(std::string&)> guarded = [&](std::string& sentence) {
    if (failure) return false;
    try {
      if (!next(sentence)) return false;
      ++total;
      return true;
    } catch (...) {
      failure = std::current_exception();
      return false;
    }
  };
  std::string model, vocab;
  const std::string error = spm::api().train(trainer_args(opts), guarded, spm_seed(opts.seed), &model, &vocab);
  if (failure) std::rethrow_exception(failure);
  if (total == 0) throw input_error(join(opts.input_files), 0, "no sentences to train on");
  if (!error.empty()) throw_training_error(opts, error);
  // Written here rather than by SentencePiece, so that a full disk is an error naming the file
  // written, not one about the training text.
  write_file_atomically(opts.model_prefix + ".model", model);
  write_file_atomically(opts.model_prefix + ".vocab", vocab);
}

}  // namespace

void train_vocab(const VocabTrainOptions& opts) {
  check_options(opts);
  size_t file = 0;
  std::unique_ptr<LineReader> reader;
  run_trainer(opts, [&](std::string& sentence) {
    for (;;) {
      if (!reader) {
        if (file == opts.input_files.size()) return false;
        reader = std::make_unique<LineReader>(opts.input_files[file++]);
      }
      if (reader->next(sentence)) return true;
      reader.reset();
    }
  });
}

void train_vocab_on(const VocabTrainOptions& opts,
                    const std::vector<const std::vector<std::string>*>& texts) {
  size_t block = 0, index = 0;
  run_trainer(opts, [&](std::string& sentence) {
    while (block < texts.size() && index >= texts[block]->size()) {
      ++block;
      index = 0;
    }
    if (block == texts.size()) return false;
    sentence = (*texts[block])[index++];
    return true;
  });
}

void train_vocab_from(const VocabTrainOptions& opts, const SentenceSource& next) { run_trainer(opts, next); }

Vocab Vocab::load(const std::string& model_path) {
  std::error_code ec;
  require_regular_file(model_path, "SentencePiece model", uint64_t(1) << 30);
  if (!std::filesystem::is_regular_file(model_path, ec))
    throw input_error(model_path, 0, "cannot open: no such file");
  std::shared_ptr<spm::Processor> sp(spm::api().new_processor());
  if (const std::string error = sp->load(model_path); !error.empty())
    throw input_error(model_path, 0, "not a valid SentencePiece model (" + error + ")");
  if (sp->pad_id() != pad || sp->unk_id() != unk || sp->bos_id() != bos || sp->eos_id() != eos)
    throw input_error(model_path, 0,
                      "SentencePiece model has special ids pad=" + std::to_string(sp->pad_id()) +
                          " unk=" + std::to_string(sp->unk_id()) + " bos=" +
                          std::to_string(sp->bos_id()) + " eos=" + std::to_string(sp->eos_id()) +
                          "; yoke needs pad=0 unk=1 bos=2 eos=3 (train it with yoke prepare)");
  Vocab v;
  v.sp_ = std::move(sp);
  v.path_ = model_path;
  return v;
}

std::vector<int> Vocab::encode(const std::string& text) const {
  std::vector<int> ids;
  if (const std::string error = sp_->encode(text, &ids); !error.empty())
    throw std::runtime_error("SentencePiece encode failed: " + error);
  return ids;
}

std::string Vocab::decode(const std::vector<int>& ids) const {
  std::vector<int> kept;
  kept.reserve(ids.size());
  const int n = size();
  for (int id : ids) {
    if (id == eos) break;
    if (id == pad || id == bos) continue;
    if (id < 0 || id >= n)
      throw std::out_of_range("Vocab::decode: id " + std::to_string(id) + " outside [0, " +
                              std::to_string(n) + ")");
    kept.push_back(id);
  }
  std::string text;
  if (const std::string error = sp_->decode(kept, &text); !error.empty())
    throw std::runtime_error("SentencePiece decode failed: " + error);
  return text;
}

std::vector<std::string> Vocab::encode_pieces(const std::string& text) const {
  std::vector<std::string> pieces;
  if (const std::string error = sp_->encode_pieces(text, &pieces); !error.empty())
    throw std::runtime_error("SentencePiece encode failed: " + error);
  return pieces;
}

std::string Vocab::piece(int id) const {
  if (id < 0 || id >= size())
    throw std::out_of_range("Vocab::piece: id " + std::to_string(id) + " outside [0, " +
                            std::to_string(size()) + ")");
  return sp_->id_to_piece(id);
}

int Vocab::piece_to_id(const std::string& piece) const { return sp_->piece_to_id(piece); }

int Vocab::size() const { return sp_->size(); }

int first_difference(const Vocab& a, const Vocab& b) {
  if (a.size() != b.size()) return std::min(a.size(), b.size());
  for (int id = 0; id < a.size(); ++id)
    if (a.piece(id) != b.piece(id)) return id;
  return -1;
}

}  // namespace yoke
