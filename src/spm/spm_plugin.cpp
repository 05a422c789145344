// libyoke_spm.so: SentencePiece behind yoke::spm::Api (see text/spm_api.h for why).
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <sstream>

#include "text/spm_api.h"

namespace {

class SpProcessor : public yoke::spm::Processor {
 public:
  std::string load(const std::string& path) override { return status(sp_.Load(path)); }
  std::string encode(const std::string& text, std::vector<int>* ids) const override {
    return status(sp_.Encode(text, ids));
  }
  std::string encode_pieces(const std::string& text, std::vector<std::string>* pieces) const override {
    return status(sp_.Encode(text, pieces));
  }
  std::string decode(const std::vector<int>& ids, std::string* text) const override {
    return status(sp_.Decode(ids, text));
  }
  std::string id_to_piece(int id) const override { return sp_.IdToPiece(id); }
  int piece_to_id(const std::string& piece) const override { return sp_.PieceToId(piece); }
  int size() const override { return sp_.GetPieceSize(); }
  int pad_id() const override { return sp_.pad_id(); }
  int unk_id() const override { return sp_.unk_id(); }
  int bos_id() const override { return sp_.bos_id(); }
  int eos_id() const override { return sp_.eos_id(); }

 private:
  static std::string status(const sentencepiece::util::Status& s) { return s.ok() ? "" : s.ToString(); }
  sentencepiece::SentencePieceProcessor sp_;
};

// Feeds the caller's sentences to the trainer one at a time, without a temporary file.
class SourceIterator : public sentencepiece::SentenceIterator {
 public:
  explicit SourceIterator(const std::function<bool(std::string&)>& next) : next_(next) { Next(); }
  bool done() const override { return done_; }
  void Next() override { done_ = !next_(value_); }
  const std::string& value() const override { return value_; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::function<bool(std::string&)>& next_;
  std::string value_;
  bool done_ = false;
};

yoke::spm::Processor* new_processor() { return new SpProcessor(); }

// The model comes back in memory, with the text of its .vocab file as SentencePiece writes it
// ("piece<TAB>score" a line): yoke writes both files, so a failed write names them.
std::string train(const std::unordered_map<std::string, std::string>& options,
                  const std::function<bool(std::string&)>& next, unsigned seed, std::string* model,
                  std::string* vocab) {
  sentencepiece::SetRandomGeneratorSeed(seed);
  SourceIterator it(next);
  auto s = sentencepiece::SentencePieceTrainer::Train(options, &it, model);
  if (!s.ok()) return s.ToString();
  sentencepiece::SentencePieceProcessor sp;
  s = sp.LoadFromSerializedProto(*model);
  if (!s.ok()) return s.ToString();
  std::ostringstream text;
  for (int id = 0; id < sp.GetPieceSize(); ++id) text << sp.IdToPiece(id) << "\t" << sp.GetScore(id) << "\n";
  *vocab = text.str();
  return "";
}

const yoke::spm::Api kApi{new_processor, train};

}  // namespace

extern "C" __attribute__((visibility("default"))) const yoke::spm::Api* yoke_spm_api() { return &kApi; }
