#include "text/vocab_files.h"

#include <cstdio>
#include <filesystem>

#include "util/checksum.h"

namespace yoke {
namespace {

std::string hex(uint32_t crc) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", crc);
  return buf;
}

}  // namespace

nlohmann::json vocab_checksums(const std::string& dir) {
  namespace fs = std::filesystem;
  nlohmann::json out = nlohmann::json::object();
  // spm.model wins, as in the loaders (store/model_store.h): a joint model's files are the ones used.
  if (fs::exists(fs::path(dir) / "spm.model")) {
    out["spm.model"] = file_crc32((fs::path(dir) / "spm.model").string());
    return out;
  }
  for (const char* f : {"spm.src.model", "spm.tgt.model"})
    if (fs::exists(fs::path(dir) / f)) out[f] = file_crc32((fs::path(dir) / f).string());
  return out;
}

std::optional<VocabDifference> vocab_difference(const nlohmann::json& recorded, const nlohmann::json& found) {
  // A file the loaders would take that was not recorded first: with spm.model beside the recorded
  // spm.src.model and spm.tgt.model, spm.model is the culprit, not the others "missing".
  for (const auto& [file, crc] : found.items())
    if (!recorded.contains(file)) return VocabDifference{file, "not among the recorded vocabulary files"};
  for (const auto& [file, crc] : recorded.items()) {
    if (!found.contains(file)) return VocabDifference{file, "missing"};
    if (!crc.is_number_unsigned()) return VocabDifference{file, "the recorded checksum is not a number"};
    if (found.at(file) != crc)
      return VocabDifference{file, "CRC-32 " + hex(found.at(file).get<uint32_t>()) + ", recorded " +
                                       hex(crc.get<uint32_t>())};
  }
  return std::nullopt;
}

}  // namespace yoke
