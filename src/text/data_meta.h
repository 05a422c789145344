// What a prepared data directory holds, as `yoke prepare` wrote it into meta.json (last, so its
// presence means a complete run). Every reader of meta.json goes through DataMeta.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace yoke {

struct DataSplit {
  std::string name;                 // train, valid, test.<name>
  std::string bin;                  // the binarized file (train, valid), relative to the directory
  std::vector<std::string> shards;  // a training corpus in several files: all of them in order, relative
  std::string src_text, tgt_text;   // raw copies of a translation split (valid, test), relative
  std::string text;                 // the raw copy of a language-model split (valid, test), relative
  bool is_test() const { return name.rfind("test.", 0) == 0; }
  std::string test_name() const { return is_test() ? name.substr(5) : ""; }
};

struct DataMeta {
  std::string dir;                  // the data directory itself
  int format_version = 0;
  std::string task = "translate";   // translate | lm
  bool joint = false;
  int src_vocab_size = 0, tgt_vocab_size = 0;
  std::vector<DataSplit> splits;    // sorted by name

  // Reads DIR/meta.json; errors name the file ("no meta.json: run `yoke prepare --out DIR`").
  static DataMeta read(const std::string& dir);
  std::vector<DataSplit> tests() const;
  std::string path(const std::string& relative) const;  // DIR/relative
  // The training corpus's binarized files (paths, in order): train.bin, or its shards. Data
  // prepared before meta.json named them is train.bin.
  std::vector<std::string> train_files() const;
};

// DataMeta::read(dir).train_files(), or DIR/train.bin where there is no meta.json (a directory
// put together by hand, as some tests do).
std::vector<std::string> training_files(const std::string& dir);

// What a checkpoint records of the corpus it was trained on, so that a resume can tell the same
// data from a data set prepared again or a meta.json edited: [{file, bytes, crc32}] of
// training_files(dir) in order (file names relative to dir). Reads every byte once (CRC-32).
nlohmann::json training_files_checksums(const std::string& dir);

}  // namespace yoke
