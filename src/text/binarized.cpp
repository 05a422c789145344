#include "text/binarized.h"


#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <type_traits>
#include <utility>

#include "util/atomic_file.h"
#include "util/checksum.h"
#include "util/error.h"

namespace yoke {
namespace {

constexpr char kMagic[8] = {'Y', 'O', 'K', 'E', 'C', 'O', 'R', 'P'};
// Version 2 appends the CRC-32 of everything before it; version 1 files (no checksum) still load.
constexpr uint32_t kVersion = 2;
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 3 * 8;  // magic, version, reserved, 3 counts

constexpr bool kLittleEndianHost = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

template <typename T>
T byte_swap(T v) {
  static_assert(std::is_trivially_copyable<T>::value, "plain values only");
  unsigned char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  for (size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(b[i], b[sizeof(T) - 1 - i]);
  std::memcpy(&v, b, sizeof(T));
  return v;
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FileHandle = std::unique_ptr<std::FILE, FileCloser>;

// --- writing ---

class Writer {
 public:
  Writer(std::string path, std::FILE* f) : path_(std::move(path)), f_(f) {}
  template <typename T>
  void values(const T* data, size_t n) {
    if (kLittleEndianHost) return bytes(data, n * sizeof(T));
    for (size_t i = 0; i < n; ++i) {
      const T v = byte_swap(data[i]);
      bytes(&v, sizeof v);
    }
  }
  template <typename T>
  void value(T v) {
    values(&v, 1);
  }
  void bytes(const void* p, size_t n) {
    if (n && std::fwrite(p, 1, n, f_) != n) fail();
    crc_ = crc32_update(crc_, p, n);
  }
  uint32_t crc() const { return crc_; }

 private:
  [[noreturn]] void fail() {
    throw input_error(path_, 0, std::string("cannot write: ") + std::strerror(errno));
  }
  std::string path_;
  std::FILE* f_;
  uint32_t crc_ = 0;
};

void write_corpus(Writer& w, const TokenizedCorpus& c) {
  w.bytes(kMagic, sizeof kMagic);
  w.value<uint32_t>(kVersion);
  w.value<uint32_t>(0);  // reserved
  w.value<uint64_t>(c.size());
  w.value<uint64_t>(c.src_tokens.size());
  w.value<uint64_t>(c.tgt_tokens.size());
  w.values(c.src_offsets.data(), c.src_offsets.size());
  w.values(c.tgt_offsets.data(), c.tgt_offsets.size());
  w.values(c.src_tokens.data(), c.src_tokens.size());
  w.values(c.tgt_tokens.data(), c.tgt_tokens.size());
  w.value<uint32_t>(w.crc());
}

// --- reading ---

class Reader {
 public:
  Reader(const std::string& path, std::FILE* f, uint64_t size) : path_(path), f_(f), left_(size) {}
  template <typename T>
  void values(T* data, size_t n) {
    need(n, sizeof(T));
    if (n && std::fread(data, sizeof(T), n, f_) != n) corrupt("cannot read: truncated file");
    left_ -= n * sizeof(T);
    crc_ = crc32_update(crc_, data, n * sizeof(T));  // over the bytes as stored
    if (!kLittleEndianHost)
      for (size_t i = 0; i < n; ++i) data[i] = byte_swap(data[i]);
  }
  template <typename T>
  T value() {
    T v;
    values(&v, 1);
    return v;
  }
  // Checks that n items fit in the rest of the file before anything is allocated for them.
  void need(uint64_t n, size_t item_bytes) {
    if (n > left_ / item_bytes) corrupt("truncated or corrupt file (counts exceed file size)");
  }
  uint64_t left() const { return left_; }
  uint32_t crc() const { return crc_; }
  [[noreturn]] void corrupt(const std::string& what) const { throw input_error(path_, 0, what); }

 private:
  const std::string& path_;
  std::FILE* f_;
  uint64_t left_;
  uint32_t crc_ = 0;
};

uint32_t read_header(Reader& r) {
  char magic[sizeof kMagic];
  r.values(magic, sizeof magic);
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0)
    r.corrupt("not a yoke binarized corpus (bad magic bytes)");
  const auto version = r.value<uint32_t>();
  if (version != kVersion && version != 1)
    r.corrupt("binarized corpus version " + std::to_string(version) + ", this build reads " +
              std::to_string(kVersion) + " (run yoke prepare again)");
  r.value<uint32_t>();  // reserved
  return version;
}

std::vector<uint64_t> read_offsets(Reader& r, uint64_t n_pairs, uint64_t n_tokens,
                                   const char* side) {
  r.need(n_pairs, sizeof(uint64_t));  // first, so that n_pairs + 1 cannot overflow
  r.need(n_pairs + 1, sizeof(uint64_t));
  std::vector<uint64_t> offsets(n_pairs + 1);
  r.values(offsets.data(), offsets.size());
  if (offsets.front() != 0 || offsets.back() != n_tokens)
    r.corrupt(std::string("corrupt ") + side + " offsets (do not span the token array)");
  for (size_t i = 1; i < offsets.size(); ++i)
    if (offsets[i] < offsets[i - 1])
      r.corrupt(std::string("corrupt ") + side + " offsets (decrease at pair " + std::to_string(i) +
                ")");
  return offsets;
}

std::vector<int32_t> read_tokens(Reader& r, uint64_t n, const char* side) {
  r.need(n, sizeof(int32_t));
  std::vector<int32_t> tokens(n);
  r.values(tokens.data(), tokens.size());
  for (int32_t t : tokens)
    if (t < 0) r.corrupt(std::string("corrupt ") + side + " tokens (negative id)");
  return tokens;
}

}  // namespace

void TokenizedCorpus::add(const std::vector<int>& src, const std::vector<int>& tgt) {
  src_tokens.insert(src_tokens.end(), src.begin(), src.end());
  tgt_tokens.insert(tgt_tokens.end(), tgt.begin(), tgt.end());
  src_offsets.push_back(src_tokens.size());
  tgt_offsets.push_back(tgt_tokens.size());
}

void save_binarized(const std::string& path, const TokenizedCorpus& corpus) {
  AtomicFile f(path);
  Writer w(path, f.stream());
  write_corpus(w, corpus);
  f.commit();
}

TokenizedCorpus load_binarized(const std::string& path) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw input_error(path, 0, "cannot open: " + ec.message());
  FileHandle f(std::fopen(path.c_str(), "rb"));
  if (!f) throw input_error(path, 0, std::string("cannot open: ") + std::strerror(errno));
  Reader r(path, f.get(), size);
  if (size < kHeaderBytes) r.corrupt("truncated file (" + std::to_string(size) + " bytes)");
  const uint32_t version = read_header(r);
  const auto n_pairs = r.value<uint64_t>();
  const auto n_src = r.value<uint64_t>();
  const auto n_tgt = r.value<uint64_t>();
  TokenizedCorpus c;
  c.src_offsets = read_offsets(r, n_pairs, n_src, "source");
  c.tgt_offsets = read_offsets(r, n_pairs, n_tgt, "target");
  c.src_tokens = read_tokens(r, n_src, "source");
  c.tgt_tokens = read_tokens(r, n_tgt, "target");
  if (version >= 2) {
    const uint32_t computed = r.crc();
    if (r.value<uint32_t>() != computed) r.corrupt("damaged file: fails its checksum (run yoke prepare again)");
  }
  if (r.left() != 0)
    r.corrupt(std::to_string(r.left()) + " unexpected bytes after the data (corrupt file)");
  return c;
}

void check_token_ids(const TokenizedCorpus& corpus, int64_t src_vocab_size, int64_t tgt_vocab_size,
                     const std::string& path) {
  auto check = [&](const std::vector<int32_t>& tokens, const std::vector<uint64_t>& offsets, int64_t size,
                   const char* side) {
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (tokens[i] < size) continue;
      const size_t pair = size_t(std::upper_bound(offsets.begin(), offsets.end(), uint64_t(i)) - offsets.begin());
      throw input_error(path, 0, std::string(side) + " token id " + std::to_string(tokens[i]) + " in pair " +
                                     std::to_string(pair) + " is outside the vocabulary of " + std::to_string(size) +
                                     " (data and vocabulary do not belong together: run yoke prepare again)");
    }
  };
  check(corpus.src_tokens, corpus.src_offsets, src_vocab_size, "source");
  check(corpus.tgt_tokens, corpus.tgt_offsets, tgt_vocab_size, "target");
}

}  // namespace yoke
