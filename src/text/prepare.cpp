#include "text/prepare.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <exception>
#include <filesystem>
#include <fstream>
#include <thread>

#include "text/binarized.h"
#include "text/corpus.h"
#include "text/corpus_shards.h"
#include "text/hold_out.h"
#include "text/pair_dedup.h"
#include "text/vocab.h"
#include "text/vocab_files.h"
#include "text/word_cache_encoder.h"
#include "util/atomic_file.h"
#include "util/dir_lock.h"
#include "util/error.h"
#include "util/json_file.h"
#include "util/progress.h"
#include "util/staged_dir.h"

namespace yoke {
namespace {

constexpr int kFormatVersion = 1;

using Clock = std::chrono::steady_clock;

// "2.3 s"; formatted apart so the caller's stream flags stay untouched.
std::string seconds_since(Clock::time_point start) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s",
                std::chrono::duration<double>(Clock::now() - start).count());
  return buf;
}

struct Split {
  std::string name, src_path, tgt_path;
  ParallelText text;
  CorpusFilterStats stats;
};

struct Encoded {
  std::vector<std::vector<int>> src, tgt;
};

bool is_safe_name(const std::string& name) {
  if (name.empty() || name[0] == '.') return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
      return false;
  return true;
}

void check_options(const PrepareOptions& o) {
  if (o.lm) {
    if (o.train_tgt.empty()) throw InputError("prepare --lm: a training text file is required");
    if (o.valid_tgt.empty()) throw InputError("prepare --lm: a validation text file is required");
  } else if (o.train_src.empty() || o.train_tgt.empty())
    throw InputError("prepare: training source and target files are required");
  if (!o.lm && (o.valid_src.empty() || o.valid_tgt.empty()))
    throw InputError("prepare: validation source and target files are required");
  if (o.out_dir.empty()) throw InputError("prepare: output directory is required");
  if (o.max_len == 0) throw InputError("prepare: max_len must be at least 1");
  // The training text is read twice (to learn the vocabulary, then to encode it), so a pipe (what
  // <(zcat ...) gives) would be read empty the second time, or wait forever for a writer: said
  // before anything starts. Gzipped files are read directly. With vocab_from it is read once.
  for (const auto* path : {&o.train_src, &o.train_tgt}) {
    std::error_code ec;
    if (o.vocab_from.empty() && !path->empty() && std::filesystem::exists(*path, ec) &&
        !std::filesystem::is_regular_file(*path, ec))
      throw input_error(*path, 0, "is not a regular file (a pipe?): prepare reads the training text twice, to learn "
                                  "the vocabulary and to encode it; give a file (a .gz is read as it is)");
  }
  if (o.tests.size() != o.test_names.size())
    throw InputError("prepare: " + std::to_string(o.tests.size()) + " test sets but " +
                     std::to_string(o.test_names.size()) + " test names");
  for (size_t i = 0; i < o.test_names.size(); ++i) {
    if (!is_safe_name(o.test_names[i]))
      throw InputError("prepare: test name '" + o.test_names[i] +
                       "' must be letters, digits, '_', '-', '.' (used in file names)");
    for (size_t j = 0; j < i; ++j)
      if (o.test_names[j] == o.test_names[i])
        throw InputError("prepare: test name '" + o.test_names[i] + "' given twice");
  }
  if (o.hold_out_pairs > 0 && !is_safe_name(o.hold_out_name))
    throw InputError("prepare: --hold-out test name '" + o.hold_out_name +
                     "' must be letters, digits, '_', '-', '.' (used in file names)");
}

Split read_split(const std::string& name, const std::string& src, const std::string& tgt) {
  Split s{name, src, tgt, {}, {}};
  s.text = read_parallel(src, tgt, &s.stats);
  return s;
}

// Monolingual text as a split whose source side is empty (encoded as nothing, stored as nothing).
Split read_text_split(const std::string& name, const std::string& path) {
  Split s{name, "", path, {}, {}};
  for (auto& line : read_lines(path)) {
    ++s.stats.read;
    if (is_blank(line)) { ++s.stats.dropped_empty; continue; }
    s.text.tgt.push_back(std::move(line));
  }
  s.text.src.assign(s.text.tgt.size(), "");
  s.stats.kept = s.text.tgt.size();
  return s;
}

// --- vocabulary ---

VocabTrainOptions vocab_options(const PrepareOptions& o, const std::string& prefix, int size,
                                std::vector<std::string> inputs) {
  VocabTrainOptions v;
  v.input_files = std::move(inputs);
  v.model_prefix = prefix;
  v.vocab_size = size;
  v.model_type = o.model_type;
  v.input_sentence_size = o.input_sentence_size;
  // Not --threads: SentencePiece's model depends on its thread count, and a data set must not
  // depend on the machine that prepared it. Two, the count yoke always trained with.
  v.num_threads = 2;
  v.seed = o.seed;
  return v;
}

// Which sides of the training text a vocabulary learns from, in this order.
enum class Side { src, tgt };

// Streams the training text to SentencePiece: for each side in `sides`, one pass over the pairs
// that have no blank side (all source sentences first, then all target ones, as the vocabulary
// was always trained). SentencePiece keeps its reservoir sample of input_sentence_size; this
// pass also checks the text (UTF-8, equal line counts) before the long steps.
void train_streamed(const PrepareOptions& o, const VocabTrainOptions& v, std::vector<Side> sides,
                    const std::string& what, HeldOutFilter& held_out, std::ostream& log) {
  const auto start = Clock::now();
  std::unique_ptr<PairReader> pairs;
  std::unique_ptr<LineReader> lines;  // language models: one text
  size_t pass = 0, sentences = 0;
  uint64_t bytes_done = 0;  // of the passes finished
  const uint64_t pass_bytes = o.lm ? LineReader(o.train_tgt).file_bytes()
                                   : PairReader(o.train_src, o.train_tgt).file_bytes();
  Progress progress("vocab: reading " + what + " text", double(pass_bytes * sides.size()) / 1e6, "MB", 10.0);
  std::string src, tgt;
  auto next = [&](std::string& sentence) {
    for (;;) {
      if (pass == sides.size()) return false;
      if (!pairs && !lines) {
        if (o.lm) lines = std::make_unique<LineReader>(o.train_tgt);
        else pairs = std::make_unique<PairReader>(o.train_src, o.train_tgt);
        held_out.restart();
      }
      const uint64_t at = bytes_done + (o.lm ? lines->bytes_read() : pairs->bytes_read());
      bool got;
      if (o.lm) {
        got = lines->next(tgt);
        if (got && is_blank(tgt)) continue;
      } else {
        got = pairs->next(src, tgt);
        if (got && (is_blank(src) || is_blank(tgt))) continue;
      }
      if (got && held_out.excluded(src, tgt)) continue;
      if (got) {
        sentence = sides[pass] == Side::src ? src : tgt;
        if ((++sentences & 0xffff) == 0) progress.update(double(at) / 1e6, std::to_string(sentences) + " sentences");
        return true;
      }
      bytes_done += pass_bytes;
      pairs.reset();
      lines.reset();
      if (++pass == sides.size()) {
        progress.update(double(bytes_done) / 1e6);
        progress.finish(std::to_string(sentences) + " sentences");
        log << "vocab: read " << sentences << " sentences (" << seconds_since(start) << "); training the "
            << v.model_type << " model on a sample of at most " << v.input_sentence_size << "\n";
        log.flush();
      }
    }
  };
  train_vocab_from(v, next);
  log << "vocab: trained " << what << " " << v.model_type << " model, " << v.vocab_size << " pieces, on "
      << std::min(sentences, v.input_sentence_size ? v.input_sentence_size : sentences) << " of " << sentences
      << " sentences (" << seconds_since(start) << ") -> "
      << std::filesystem::path(v.model_prefix).filename().string() << ".model\n";
}

// Returns the model file names (relative to out_dir) for the source and the target side.
std::pair<std::string, std::string> train_vocabularies(const PrepareOptions& o, HeldOutFilter& held_out,
                                                       std::ostream& log) {
  const std::string dir = o.out_dir + "/";
  if (o.lm) {
    train_streamed(o, vocab_options(o, dir + "spm", o.vocab_size, {o.train_tgt}), {Side::tgt}, "language-model",
                   held_out, log);
    return {"spm.model", "spm.model"};
  }
  if (o.joint) {
    train_streamed(o, vocab_options(o, dir + "spm", o.vocab_size, {o.train_src, o.train_tgt}),
                   {Side::src, Side::tgt}, "joint", held_out, log);
    return {"spm.model", "spm.model"};
  }
  const int src_size = o.src_vocab_size > 0 ? o.src_vocab_size : o.vocab_size;
  const int tgt_size = o.tgt_vocab_size > 0 ? o.tgt_vocab_size : o.vocab_size;
  train_streamed(o, vocab_options(o, dir + "spm.src", src_size, {o.train_src}), {Side::src}, "source", held_out, log);
  train_streamed(o, vocab_options(o, dir + "spm.tgt", tgt_size, {o.train_tgt}), {Side::tgt}, "target", held_out, log);
  return {"spm.src.model", "spm.tgt.model"};
}

// The SentencePiece model(s) of o.vocab_from, copied into out_dir (with their .vocab files where
// there are). Refuses a directory without them, and one whose layout (joint or separate) is not
// the one this data set asks for.
std::pair<std::string, std::string> copy_vocabularies(const PrepareOptions& o, std::ostream& log) {
  namespace fs = std::filesystem;
  const std::string& from = o.vocab_from;
  if (!fs::is_directory(from)) throw input_error(from, 0, "--vocab-from: no such directory (a model's save_dir, an export, or a data set)");
  const nlohmann::json found = vocab_checksums(from);
  const bool joint = found.contains("spm.model");
  if (found.empty())
    throw input_error(from, 0, "--vocab-from: holds no SentencePiece model (spm.model, or spm.src.model and spm.tgt.model)");
  if (!joint && found.size() != 2)
    throw input_error(from, 0, std::string("--vocab-from: has ") + found.items().begin().key() +
                                   " without its other side (separate vocabularies need spm.src.model and spm.tgt.model)");
  if (o.lm && !joint)
    throw input_error(from, 0, "--vocab-from: has separate source and target vocabularies (spm.src.model, spm.tgt.model); "
                               "a language model's data needs one (spm.model)");
  if (!o.lm && o.joint != joint)
    throw input_error(from, 0, joint ? "--vocab-from: has one joint vocabulary (spm.model), and this data set asks for "
                                       "separate ones: leave --joint to the model (drop --src/--tgt-vocab-size)"
                                     : "--vocab-from: has separate source and target vocabularies (spm.src.model, "
                                       "spm.tgt.model), and --joint asks for one: drop --joint");
  for (const auto& [file, crc] : found.items()) {
    for (const std::string f : {file, file.substr(0, file.size() - 6) + ".vocab"}) {
      if (!fs::exists(fs::path(from) / f)) continue;
      fs::copy_file(fs::path(from) / f, fs::path(o.out_dir) / f, fs::copy_options::overwrite_existing);
    }
    char crc_hex[16];
    std::snprintf(crc_hex, sizeof crc_hex, "%08x", crc.get<uint32_t>());
    log << "vocab: " << file << " copied from " << from << " (CRC-32 " << crc_hex << "), not trained\n";
  }
  return joint ? std::pair<std::string, std::string>{"spm.model", "spm.model"}
               : std::pair<std::string, std::string>{"spm.src.model", "spm.tgt.model"};
}

// --- encoding ---

// One word cache per thread and side, kept from chunk to chunk.
struct Encoders {
  Encoders(const Vocab& src, const Vocab& tgt, size_t threads) {
    for (size_t i = 0; i < threads; ++i) {
      this->src.emplace_back(src);
      this->tgt.emplace_back(tgt);
    }
  }
  std::deque<WordCacheEncoder> src, tgt;  // a deque: the encoders are not movable
};

// Encodes both sides in contiguous ranges, one per thread (each thread has its own caches).
Encoded encode_parallel(const ParallelText& text, Encoders& encoders) {
  const size_t n = text.src.size();
  Encoded out;
  out.src.resize(n);
  out.tgt.resize(n);
  const size_t workers = std::max<size_t>(1, std::min<size_t>(encoders.src.size(), (n + 999) / 1000));
  std::vector<std::exception_ptr> errors(workers);
  auto work = [&](size_t w) {
    try {
      for (size_t i = n * w / workers; i < n * (w + 1) / workers; ++i) {
        if (!text.src[i].empty()) encoders.src[w].encode(text.src[i], out.src[i]);
        encoders.tgt[w].encode(text.tgt[i], out.tgt[i]);
      }
    } catch (...) {
      errors[w] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (size_t w = 1; w < workers; ++w) pool.emplace_back(work, w);
  work(0);
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

Encoded encode_parallel(const ParallelText& text, const Vocab& src_vocab, const Vocab& tgt_vocab, int threads) {
  Encoders encoders(src_vocab, tgt_vocab, size_t(threads));
  return encode_parallel(text, encoders);
}

// Keeps pair i when `keep(i)`; compacts the raw text to match, so text and tokens stay aligned.
template <typename Keep>
TokenizedCorpus collect(Split& split, const Encoded& enc, Keep keep) {
  TokenizedCorpus corpus;
  size_t out = 0;
  for (size_t i = 0; i < enc.src.size(); ++i) {
    if (!keep(i)) continue;
    corpus.add(enc.src[i], enc.tgt[i]);
    if (out != i) {  // self-move-assignment would empty the string
      split.text.src[out] = std::move(split.text.src[i]);
      split.text.tgt[out] = std::move(split.text.tgt[i]);
    }
    ++out;
  }
  split.text.src.resize(out);
  split.text.tgt.resize(out);
  return corpus;
}

// --- output ---

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  write_file_atomically(path, [&](std::ostream& out) {
    for (const auto& l : lines) out << l << '\n';
  });
}

nlohmann::json split_meta(const Split& s, const TokenizedCorpus& c) {
  return {{"src", s.src_path},
          {"tgt", s.tgt_path},
          {"read", s.stats.read},
          {"kept", s.stats.kept},
          {"dropped_empty", s.stats.dropped_empty},
          {"dropped_long", s.stats.dropped_long},
          {"src_tokens", c.src_tokens.size()},
          {"tgt_tokens", c.tgt_tokens.size()}};
}

void log_split(std::ostream& log, const Split& s, bool length_filtered, size_t max_len) {
  log << s.name << ": " << s.stats.read << " read, " << s.stats.kept << " kept, "
      << s.stats.dropped_empty << " empty dropped";
  if (length_filtered)
    log << ", " << s.stats.dropped_long << " over " << max_len << " tokens dropped";
  log << "\n";
}

// Valid and test sets: every non-blank pair within max_len is kept. A longer one could not be
// decoded (positions run out) and would stop training at its first validation.
nlohmann::json write_eval_split(const PrepareOptions& o, Split& s, const Vocab& src_vocab,
                                const Vocab& tgt_vocab, bool binarize, std::ostream& log) {
  const Encoded enc = encode_parallel(s.text, src_vocab, tgt_vocab, o.threads);
  const TokenizedCorpus corpus = collect(s, enc, [&](size_t i) {
    if (enc.src[i].size() > o.max_len || enc.tgt[i].size() > o.max_len) {
      ++s.stats.dropped_long;
      return false;
    }
    return true;
  });
  s.stats.kept = corpus.size();
  nlohmann::json meta = split_meta(s, corpus);
  const std::string dir = o.out_dir + "/";
  if (binarize) {
    save_binarized(dir + s.name + ".bin", corpus);
    meta["file"] = s.name + ".bin";
  }
  if (o.lm) {
    write_lines(dir + s.name + ".txt", s.text.tgt);
    meta["text"] = s.name + ".txt";
  } else {
    write_lines(dir + s.name + ".src.txt", s.text.src);
    write_lines(dir + s.name + ".tgt.txt", s.text.tgt);
    meta["src_text"] = s.name + ".src.txt";
    meta["tgt_text"] = s.name + ".tgt.txt";
  }
  log_split(log, s, true, o.max_len);
  return meta;
}

// Training text, streamed: read `chunk_pairs` pairs, drop blank and (with --dedup) repeated
// pairs, encode the chunk on every thread, drop pairs by length and ratio in order, and append
// the rest to the shard being written. Memory: one chunk, one shard, the word caches and the
// dedup table, whatever the corpus size.
nlohmann::json encode_training_text(const PrepareOptions& o, const Vocab& src_vocab, const Vocab& tgt_vocab,
                                    HeldOutFilter& held_out, std::ostream& log) {
  const auto start = Clock::now();
  Split train{"train", o.lm ? "" : o.train_src, o.train_tgt, {}, {}};
  CorpusFilterStats& st = train.stats;
  std::unique_ptr<PairReader> pairs;
  std::unique_ptr<LineReader> lines;
  if (o.lm) lines = std::make_unique<LineReader>(o.train_tgt);
  else pairs = std::make_unique<PairReader>(o.train_src, o.train_tgt);
  auto bytes_read = [&] { return o.lm ? lines->bytes_read() : pairs->bytes_read(); };
  const uint64_t total_bytes = o.lm ? lines->file_bytes() : pairs->file_bytes();
  Progress progress("encode: train", double(total_bytes) / 1e6, "MB", 10.0);
  Encoders encoders(src_vocab, tgt_vocab, size_t(o.threads));
  ShardWriter out(o.out_dir, "train", o.shard_pairs);
  PairDedup seen;
  held_out.restart();
  uint64_t held = 0;  // pairs held out or sharing a sentence with one: counted apart from read's drops
  ParallelText chunk;
  std::string src, tgt;
  bool more = true;
  while (more) {
    chunk.src.clear();
    chunk.tgt.clear();
    while (chunk.tgt.size() < std::max<size_t>(1, o.chunk_pairs)) {
      more = o.lm ? lines->next(tgt) : pairs->next(src, tgt);
      if (!more) break;
      ++st.read;
      if ((!o.lm && is_blank(src)) || is_blank(tgt)) { ++st.dropped_empty; continue; }
      if (held_out.excluded(o.lm ? std::string() : src, tgt)) { ++held; continue; }
      if (o.dedup && !seen.first_time(src, tgt)) { ++st.dropped_duplicate; continue; }
      chunk.src.push_back(o.lm ? std::string() : src);
      chunk.tgt.push_back(tgt);
    }
    const Encoded enc = encode_parallel(chunk, encoders);
    for (size_t i = 0; i < enc.tgt.size(); ++i) {
      const size_t ls = enc.src[i].size(), lt = enc.tgt[i].size();
      // A line of characters the normalizer removes encodes to nothing.
      if ((!o.lm && ls == 0) || lt == 0) { ++st.dropped_empty; continue; }
      if (ls > o.max_len || lt > o.max_len) { ++st.dropped_long; continue; }
      if (!o.lm && o.max_ratio > 0 && double(std::max(ls, lt)) > o.max_ratio * double(std::min(ls, lt))) {
        ++st.dropped_ratio;
        continue;
      }
      out.add(enc.src[i], enc.tgt[i]);
    }
    const double s = progress.elapsed_s();
    progress.update(double(bytes_read()) / 1e6,
                    std::to_string(st.read) + " pairs, " + std::to_string(size_t(s > 0 ? double(st.read) / s : 0)) + " pairs/s");
  }
  const std::vector<std::string> files = out.finish();
  progress.finish(std::to_string(st.read) + " pairs");
  st.kept = out.pairs();
  if (st.kept == 0)
    throw InputError("prepare: no training pair is left (" + std::to_string(st.dropped_long) + " over --max-len " +
                     std::to_string(o.max_len) + " tokens, " + std::to_string(st.dropped_empty) + " empty, " +
                     std::to_string(st.dropped_duplicate) + " duplicates, " + std::to_string(st.dropped_ratio) +
                     " over --max-ratio): nothing to train on");
  nlohmann::json meta = {{"src", train.src_path},
                         {"tgt", train.tgt_path},
                         {"read", st.read},
                         {"kept", st.kept},
                         {"dropped_empty", st.dropped_empty},
                         {"dropped_long", st.dropped_long},
                         {"dropped_duplicate", st.dropped_duplicate},
                         {"dropped_ratio", st.dropped_ratio},
                         {"src_tokens", out.src_tokens()},
                         {"tgt_tokens", out.tgt_tokens()},
                         {"file", files[0]}};
  if (files.size() > 1) meta["shards"] = files;
  if (o.hold_out_pairs > 0) {
    meta["held_out"] = {{"test", o.hold_out_name},
                        {"pairs", o.hold_out_pairs},
                        {"seed", o.hold_out_seed},
                        {"dropped_overlap", held_out.overlapping()}};
    log << "train: " << held - held_out.overlapping() << (o.lm ? " lines" : " pairs") << " held out as test set "
        << o.hold_out_name << ", " << held_out.overlapping() << " more left out for sharing a sentence with one of them\n";
  }
  log_split(log, train, true, o.max_len);
  if (o.dedup || o.max_ratio > 0)
    log << "train: " << st.dropped_duplicate << " duplicate pairs dropped (--dedup), " << st.dropped_ratio
        << " over length ratio " << o.max_ratio << " dropped (--max-ratio)\n";
  size_t hits = 0, misses = 0;
  for (const auto* side : {&encoders.src, &encoders.tgt})
    for (const auto& e : *side) hits += e.hits(), misses += e.misses();
  char cached[32];
  std::snprintf(cached, sizeof cached, "%.1f%%", hits + misses ? 100.0 * double(hits) / double(hits + misses) : 0.0);
  log << "train: encoded on " << o.threads << " threads into " << files.size() << (files.size() == 1 ? " file" : " shards")
      << ", " << cached << " of words from the cache (" << seconds_since(start) << ")\n";
  return meta;
}

}  // namespace

// Everything prepare_data promises, written into opts.out_dir (a fresh directory).
nlohmann::json prepare_into(const PrepareOptions& opts, std::ostream& log) {

  // Read the small sets first: a bad test file should fail in a second, not after training.
  auto read = [&](const std::string& name, const std::string& src, const std::string& tgt) {
    return opts.lm ? read_text_split(name, tgt) : read_split(name, src, tgt);
  };
  Split valid = read("valid", opts.valid_src, opts.valid_tgt);
  std::vector<Split> tests;
  for (size_t i = 0; i < opts.tests.size(); ++i)
    tests.push_back(read("test." + opts.test_names[i], opts.tests[i].first, opts.tests[i].second));

  HeldOutFilter held_out;
  nlohmann::json held_out_meta;
  if (opts.hold_out_pairs > 0) {
    const auto start = Clock::now();
    HeldOutPairs held = draw_held_out(opts.lm ? "" : opts.train_src, opts.train_tgt, opts.hold_out_pairs,
                                      opts.hold_out_seed);
    held_out = HeldOutFilter(held);
    const std::string name = "test." + opts.hold_out_name;
    auto it = std::find_if(tests.begin(), tests.end(), [&](const Split& t) { return t.name == name; });
    if (it == tests.end()) {
      tests.push_back(Split{name, opts.lm ? "" : opts.train_src, opts.train_tgt, {}, {}});
      it = tests.end() - 1;
    }
    held_out_meta = {{"pairs", held.index.size()}, {"seed", opts.hold_out_seed}, {"from_file", it->text.tgt.size()}};
    for (size_t i = 0; i < held.index.size(); ++i) {
      it->text.src.push_back(std::move(held.src[i]));
      it->text.tgt.push_back(std::move(held.tgt[i]));
    }
    it->stats.read += held.index.size();
    log << "hold-out: drew " << held.index.size() << " of " << held.pairs_seen << (opts.lm ? " training lines" : " training pairs") << " (seed "
        << opts.hold_out_seed << ") into test set " << opts.hold_out_name << " (" << seconds_since(start) << ")\n";
  }

  const auto [src_model, tgt_model] =
      opts.vocab_from.empty() ? train_vocabularies(opts, held_out, log) : copy_vocabularies(opts, log);
  const Vocab src_vocab = Vocab::load(opts.out_dir + "/" + src_model);
  const Vocab tgt_vocab = opts.joint || opts.lm ? src_vocab : Vocab::load(opts.out_dir + "/" + tgt_model);

  nlohmann::json meta = {{"format_version", kFormatVersion},
                         {"task", opts.lm ? "lm" : "translate"},
                         {"joint", opts.lm || opts.joint},
                         {"model_type", opts.vocab_from.empty() ? opts.model_type : "copied"},
                         {"max_len", opts.max_len},
                         {"seed", opts.seed},
                         {"src_vocab_size", src_vocab.size()},
                         {"tgt_vocab_size", tgt_vocab.size()},
                         {"src_vocab", src_model},
                         {"tgt_vocab", tgt_model}};
  if (!opts.vocab_from.empty()) meta["vocab_from"] = opts.vocab_from;
  if (opts.dedup) meta["dedup"] = true;
  if (opts.max_ratio > 0) meta["max_ratio"] = opts.max_ratio;

  const auto start = Clock::now();
  meta["splits"]["train"] = encode_training_text(opts, src_vocab, tgt_vocab, held_out, log);
  meta["splits"]["valid"] = write_eval_split(opts, valid, src_vocab, tgt_vocab, true, log);
  for (auto& t : tests) {
    meta["splits"][t.name] = write_eval_split(opts, t, src_vocab, tgt_vocab, false, log);
    if (t.name == "test." + opts.hold_out_name && opts.hold_out_pairs > 0) meta["splits"][t.name]["held_out"] = held_out_meta;
  }
  log << "encoded and wrote all splits (" << seconds_since(start) << ")\n";

  write_json(opts.out_dir + "/meta.json", meta);
  return meta;
}

// A data set is built in a directory beside the target and swapped in at the end (util/staged_dir.h:
// one atomic exchange when it replaces one), so the target holds either the old data set or the
// new one, never a mix of both (an old spm.model beside new splits would silently win) nor nothing.
nlohmann::json prepare_data(const PrepareOptions& opts, std::ostream& log) {
  namespace fs = std::filesystem;
  check_options(opts);
  fs::path out = fs::absolute(opts.out_dir).lexically_normal();
  if (!out.has_filename()) out = out.parent_path();
  const fs::path parent = out.parent_path();
  const std::string name = out.filename().string();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw input_error(parent.string(), 0, "cannot create directory: " + ec.message());
  const DirLock lock((parent / ("." + name + ".lock")).string(), opts.out_dir);
  if (fs::exists(out)) {
    if (!fs::is_directory(out)) throw input_error(opts.out_dir, 0, "exists and is not a directory");
    if (!fs::is_empty(out) && !opts.force)
      throw input_error(opts.out_dir, 0,
                        fs::exists(out / "meta.json")
                            ? "already holds a prepared data set; --force replaces it, or choose another --out"
                            : "is not empty; prepare writes a new directory (--force replaces everything in it)");
  }
  // What is read must survive the write: --out is none of the inputs, holds none, lies in none.
  std::vector<std::pair<std::string, std::string>> sources = {{"--vocab-from", opts.vocab_from}};
  for (const auto* f : {&opts.train_src, &opts.train_tgt, &opts.valid_src, &opts.valid_tgt})
    if (!f->empty()) sources.emplace_back("an input file", *f);
  for (const auto& [src, tgt] : opts.tests)
    for (const auto* f : {&src, &tgt})
      if (!f->empty()) sources.emplace_back("a test file", *f);
  StagedDirectory staged(out.string(), opts.force, "yoke prepare", sources);
  PrepareOptions build = opts;
  if (build.threads <= 0) build.threads = int(std::max(1u, std::thread::hardware_concurrency()));
  build.out_dir = staged.path();
  nlohmann::json meta;
  try {
    meta = prepare_into(build, log);
  } catch (const InputError& e) {
    throw InputError(staged.as_out(e.what()));
  }
  staged.commit();
  return meta;
}

}  // namespace yoke
