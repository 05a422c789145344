// `yoke translate`'s --prefix-file and --constraints: line i of each guides input line i (a prefix
// its translation continues; tab-separated phrases it must contain). Read whole once; each chunk
// of input takes its lines from them, with an error naming the file when it has too few.
#pragma once
#include <string>
#include <vector>

#include "decode/translation_service.h"

namespace yoke::cli {

class GuideFiles {
 public:
  GuideFiles(const std::string& prefix_file, const std::string& constraints_file);
  // Sets request.prefixes and request.constraints for its lines (input lines first_index, …).
  void guide(TranslationRequest& request, size_t first_index) const;

 private:
  std::string prefix_file_, constraints_file_;
  std::vector<std::string> prefixes_, constraints_;
};

}  // namespace yoke::cli
