#include "text/data_meta.h"

#include <filesystem>

#include "util/checksum.h"
#include "util/error.h"
#include "util/json_file.h"

namespace yoke {

DataMeta DataMeta::read(const std::string& dir) {
  const std::string file = (std::filesystem::path(dir) / "meta.json").string();
  if (!std::filesystem::exists(file))
    throw input_error(file, 0, "not found: is " + dir + " a data directory from `yoke prepare --out " + dir + "`?");
  const auto j = read_json(file);
  DataMeta m;
  m.dir = dir;
  try {
    m.format_version = j.at("format_version");
    m.task = j.value("task", "translate");
    m.joint = j.at("joint");
    m.src_vocab_size = j.at("src_vocab_size");
    m.tgt_vocab_size = j.at("tgt_vocab_size");
    for (const auto& [name, s] : j.at("splits").items()) {
      DataSplit split;
      split.name = name;
      split.bin = s.value("file", "");
      split.src_text = s.value("src_text", "");
      split.tgt_text = s.value("tgt_text", "");
      split.text = s.value("text", "");
      split.shards = s.value("shards", std::vector<std::string>());
      m.splits.push_back(split);
    }
  } catch (const nlohmann::json::exception& e) {
    throw input_error(file, 0, std::string("not a yoke data description: ") + e.what());
  }
  return m;
}

std::vector<DataSplit> DataMeta::tests() const {
  std::vector<DataSplit> out;
  for (const auto& s : splits)
    if (s.is_test()) out.push_back(s);
  return out;
}

std::vector<std::string> DataMeta::train_files() const {
  for (const auto& s : splits)
    if (s.name == "train") {
      if (!s.shards.empty()) {
        std::vector<std::string> out;
        for (const auto& f : s.shards) out.push_back(path(f));
        return out;
      }
      if (!s.bin.empty()) return {path(s.bin)};
    }
  return {path("train.bin")};
}

std::vector<std::string> training_files(const std::string& dir) {
  if (!std::filesystem::exists(std::filesystem::path(dir) / "meta.json"))
    return {(std::filesystem::path(dir) / "train.bin").string()};
  return DataMeta::read(dir).train_files();
}

nlohmann::json training_files_checksums(const std::string& dir) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& file : training_files(dir)) {
    const std::filesystem::path p(file);
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(p, ec);
    if (ec) throw input_error(file, 0, "training data file not found (" + ec.message() + ")");
    out.push_back({{"file", p.lexically_relative(dir).string()}, {"bytes", bytes}, {"crc32", file_crc32(file)}});
  }
  return out;
}

std::string DataMeta::path(const std::string& relative) const {
  return (std::filesystem::path(dir) / relative).string();
}

}  // namespace yoke
