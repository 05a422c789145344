#include "cli/guide_files.h"

#include <algorithm>

#include "text/corpus.h"
#include "util/error.h"

namespace yoke::cli {

namespace {

// Line `index` (0-based) of a file that must have one line per input line.
const std::string& line_for(const std::vector<std::string>& lines, size_t index, const std::string& file,
                            const std::string& option) {
  if (index >= lines.size())
    throw InputError(file + " (" + option + ") has " + std::to_string(lines.size()) + " lines; input line " +
                     std::to_string(index + 1) + " has none");
  return lines[index];
}

// The phrases of one line of a --constraints file: tab-separated; blank ones dropped.
std::vector<std::string> tab_separated(const std::string& line) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t tab; (tab = line.find('\t', at)) != std::string::npos; at = tab + 1) out.push_back(line.substr(at, tab - at));
  out.push_back(line.substr(at));
  out.erase(std::remove_if(out.begin(), out.end(), [](const std::string& s) {
              return s.find_first_not_of(" ") == std::string::npos;
            }),
            out.end());
  return out;
}

}  // namespace

GuideFiles::GuideFiles(const std::string& prefix_file, const std::string& constraints_file)
    : prefix_file_(prefix_file), constraints_file_(constraints_file) {
  if (!prefix_file.empty()) prefixes_ = read_lines(prefix_file);
  if (!constraints_file.empty()) constraints_ = read_lines(constraints_file);
}

void GuideFiles::guide(TranslationRequest& request, size_t first_index) const {
  for (size_t i = 0; i < request.lines.size() && !prefix_file_.empty(); ++i)
    request.prefixes.push_back(line_for(prefixes_, first_index + i, prefix_file_, "--prefix-file"));
  for (size_t i = 0; i < request.lines.size() && !constraints_file_.empty(); ++i)
    request.constraints.push_back(tab_separated(line_for(constraints_, first_index + i, constraints_file_, "--constraints")));
}

}  // namespace yoke::cli
