// util/remove_tree: std::filesystem::remove_all's job through POSIX nftw (why: its header).
#include "util/remove_tree.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "file_helpers.h"

namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

}  // namespace

TEST(RemoveTree, RemovesANestedTreeAndLeavesItsSiblings) {
  const fs::path tmp = yoke::test::temp_dir("remove_tree");
  const fs::path root = tmp / "tree";
  write(root / "a.txt", "a");
  write(root / "sub" / "b.txt", "b");
  write(root / "sub" / "deeper" / "c.txt", "c");
  fs::create_directories(root / "empty");
  write(tmp / "sibling.txt", "stays");
  EXPECT_EQ(yoke::remove_tree(root.string()), "");
  EXPECT_FALSE(fs::exists(root));
  EXPECT_TRUE(fs::exists(tmp / "sibling.txt"));
}

TEST(RemoveTree, RemovesLinksNotWhatTheyPointTo) {
  const fs::path tmp = yoke::test::temp_dir("remove_tree");
  write(tmp / "outside" / "keep.txt", "keep");
  const fs::path root = tmp / "tree";
  fs::create_directories(root);
  fs::create_directory_symlink(tmp / "outside", root / "link");
  EXPECT_EQ(yoke::remove_tree(root.string()), "");
  EXPECT_FALSE(fs::exists(root));
  EXPECT_TRUE(fs::exists(tmp / "outside" / "keep.txt"));
  // A link given itself is removed as a link.
  fs::create_directory_symlink(tmp / "outside", tmp / "link2");
  EXPECT_EQ(yoke::remove_tree((tmp / "link2").string()), "");
  EXPECT_FALSE(fs::is_symlink(fs::symlink_status(tmp / "link2")));
  EXPECT_TRUE(fs::exists(tmp / "outside" / "keep.txt"));
}

TEST(RemoveTree, AFileOrNothingAtAll) {
  const fs::path tmp = yoke::test::temp_dir("remove_tree");
  write(tmp / "f.txt", "x");
  EXPECT_EQ(yoke::remove_tree((tmp / "f.txt").string()), "");
  EXPECT_FALSE(fs::exists(tmp / "f.txt"));
  EXPECT_EQ(yoke::remove_tree((tmp / "missing").string()), "");
}

TEST(RemoveTree, AFailureIsNamed) {
  // procfs refuses to unlink its files, to root too: a failure this test can cause anywhere.
  const std::string failed = yoke::remove_tree("/proc/self/comm");
  EXPECT_NE(failed.find("/proc/self/comm: "), std::string::npos) << failed;
}
