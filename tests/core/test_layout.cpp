// The folders of src/ follow the stages of the work: a file may include only its own folder and
// folders earlier in kLayers, so there is no cycle between folders. Decoding and language-model
// code stand beside training, not on it: neither includes train/ (nor store/: they take a model,
// not a directory), and train/ includes neither (validation decoding is handed to the trainer by
// its caller). Model storage (store/) sits below training: serve/, analysis/ and python/ (the
// `import yoke` facade) read models through it without reaching into train/. service/ holds what
// owns loaded models and decodes them for the front doors (store/ below it, decode/ below that).
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kLayers = {"util",  "compat", "config", "text",  "eval",   "align",    "batch",
                                          "embed", "model",  "loss",   "decode", "lm",    "store",    "service", "train",
                                          "report", "analysis", "experiment", "serve", "cli", "starter",
                                          "python", "spm"};
// Reading a model is store/'s business: only what runs training (experiment/, cli/) includes train/.
const std::set<std::pair<std::string, std::string>> kForbidden = {
    {"decode", "train"}, {"lm", "train"},         {"train", "decode"}, {"train", "lm"},     {"decode", "lm"},
    {"lm", "decode"},    {"decode", "store"},     {"lm", "store"},     {"report", "train"}, {"analysis", "train"},
    {"serve", "train"},  {"python", "train"}, {"service", "train"}, {"train", "service"}};

TEST(Layout, IncludesRunDownTheStagesOnly) {
  const fs::path src = fs::path(YOKE_SOURCE_DIR) / "src";
  ASSERT_TRUE(fs::is_directory(src)) << src;
  std::map<std::string, size_t> rank;
  for (size_t i = 0; i < kLayers.size(); ++i) rank[kLayers[i]] = i;
  const std::regex include(R"(^\s*#\s*include\s+"([a-z_]+)/[^"]+")");
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    const std::string folder = fs::relative(e.path(), src).begin()->string();
    ASSERT_TRUE(rank.count(folder)) << "src/" << folder << "/ is not in this test's list of stages";
    ++files;
    std::ifstream in(e.path());
    size_t no = 0;
    for (std::string line; std::getline(in, line);) {
      ++no;
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      const std::string to = m[1];
      const std::string where = e.path().string() + ":" + std::to_string(no) + ": " + line;
      ASSERT_TRUE(rank.count(to)) << where << " (unknown folder)";
      EXPECT_LE(rank[to], rank[folder]) << where << " includes a later stage";
      EXPECT_FALSE(kForbidden.count({folder, to})) << where;
    }
  }
  EXPECT_GT(files, 50u);  // the walk really saw the sources
}

// docs/architecture.md, the newcomer's map, stays true: its table of rooms has one row per folder
// of src/, in the include order above, and every src/ file or folder it names exists.
TEST(Layout, TheArchitecturePageNamesEveryRoomInOrderAndOnlyFilesThatExist) {
  const fs::path root = YOKE_SOURCE_DIR, page = root / "docs/architecture.md";
  std::ifstream in(page);
  ASSERT_TRUE(in) << page;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> rows;
  const std::regex row(R"(\n\| `src/([a-z_]+)/` \|)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), row); it != std::sregex_iterator(); ++it)
    rows.push_back((*it)[1]);
  std::vector<std::string> folders;
  for (const auto& layer : kLayers)
    if (fs::is_directory(root / "src" / layer)) folders.push_back(layer);
  EXPECT_EQ(rows, folders) << page << ": the table of rooms must list the folders of src/ in kLayers' order";
  const std::regex mention(R"(src/[a-z_]+/(?:[a-z_0-9]+\.(?:h|cpp))?)");
  size_t mentions = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), mention); it != std::sregex_iterator(); ++it, ++mentions)
    EXPECT_TRUE(fs::exists(root / it->str())) << page << " names " << it->str() << ", which does not exist";
  EXPECT_GT(mentions, 30u);
}

}  // namespace

// The PyTorch wheel's libtorch.so (the GPU build) shadows std::filesystem::remove_all with a copy
// that crashes when it recurses; src/ removes trees through util/remove_tree.h. CI links Debian's
// LibTorch, where remove_all works, so only this check keeps a new call from reaching the GPU.
TEST(Layout, NoSourceCallsFilesystemRemoveAll) {
  const fs::path src = fs::path(YOKE_SOURCE_DIR) / "src";
  const std::regex call(R"(\bremove_all\s*\()");
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file()) continue;
    ++files;
    std::ifstream in(e.path());
    size_t no = 0;
    for (std::string line; std::getline(in, line);) {
      ++no;
      const std::string code = line.substr(0, line.find("//"));
      EXPECT_FALSE(std::regex_search(code, call)) << e.path().string() << ":" << no << ": " << line;
    }
  }
  EXPECT_GT(files, 50u);
}
