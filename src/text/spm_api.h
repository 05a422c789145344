// The SentencePiece interface yoke uses, behind a plugin boundary.
//
// Why a plugin: Debian's libsentencepiece carries its own copy of protobuf-lite and exports its
// symbols; LibTorch loads the full libprotobuf. Linked into one program, the two interpose each
// other and the process crashes before main(). So SentencePiece lives in libyoke_spm.so, loaded
// with dlopen(RTLD_LOCAL | RTLD_DEEPBIND): it binds to its own protobuf and hides it from ours
// (DEEPBIND only where the process exports a protobuf: spm_loader.cpp).
// Only virtual calls and standard-library types cross the boundary; errors come back as text.
#pragma once
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace yoke::spm {

class Processor {
 public:
  virtual ~Processor() = default;
  virtual std::string load(const std::string& path) = 0;  // "" on success, else the error
  virtual std::string encode(const std::string& text, std::vector<int>* ids) const = 0;
  virtual std::string encode_pieces(const std::string& text, std::vector<std::string>* pieces) const = 0;
  virtual std::string decode(const std::vector<int>& ids, std::string* text) const = 0;
  virtual std::string id_to_piece(int id) const = 0;
  virtual int piece_to_id(const std::string& piece) const = 0;
  virtual int size() const = 0;
  virtual int pad_id() const = 0;
  virtual int unk_id() const = 0;
  virtual int bos_id() const = 0;
  virtual int eos_id() const = 0;
};

struct Api {
  Processor* (*new_processor)();
  // Trains on the sentences `next` gives one by one (it returns false at the end and must not
  // throw) with SentencePiece's key/value options, writing no file: the serialized model and
  // the text of its .vocab file come back in `model` and `vocab`. SentencePiece keeps only
  // its sample (input_sentence_size, reservoir-sampled), so the text is never held whole.
  // "" on success, else the error.
  std::string (*train)(const std::unordered_map<std::string, std::string>& options,
                       const std::function<bool(std::string&)>& next, unsigned seed, std::string* model,
                       std::string* vocab);
};

// Loads the plugin on first use; throws std::runtime_error saying where it looked.
const Api& api();

}  // namespace yoke::spm

extern "C" const yoke::spm::Api* yoke_spm_api();
