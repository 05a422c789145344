// Which SentencePiece models a data or model directory holds, with their checksums. A model
// directory records those it was trained with (in its checkpoints' meta, key "vocab"), so that a
// vocabulary replaced later (a data set prepared again, another data set, a file copied over)
// is found before it silently changes what the weights mean.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace yoke {

// {"spm.model": CRC-32} for a joint vocabulary, else {"spm.src.model": …, "spm.tgt.model": …}
// (whichever of them exist), as the loaders pick the files; an empty object when there are none.
nlohmann::json vocab_checksums(const std::string& dir);

struct VocabDifference {
  std::string file;    // the file name (in the directory) that differs
  std::string detail;  // what differs, e.g. "CRC-32 0a1b2c3d, recorded 4e5f6a7b"
};

// The first difference between a recorded set of vocab_checksums (an object) and a found one, if any.
std::optional<VocabDifference> vocab_difference(const nlohmann::json& recorded, const nlohmann::json& found);

}  // namespace yoke
