// util/staged_dir.h: an output folder written whole or not at all, and what killed writers left
// beside it cleared by the next one.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "util/error.h"
#include "util/staged_dir.h"

namespace fs = std::filesystem;

namespace yoke {
namespace {

fs::path fresh(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("yoke_staged_" + std::to_string(::getpid())) / name;
  fs::remove_all(dir.parent_path() / name);
  fs::create_directories(dir.parent_path());
  return dir;
}

TEST(StagedDirectory, WritesWholeOrNotAtAllAndRefusesAFolderThatHoldsSomething) {
  const auto out = fresh("out");
  {
    StagedDirectory staged(out.string(), false, "test");
    std::ofstream(fs::path(staged.path()) / "a.txt") << "a";
    EXPECT_FALSE(fs::exists(out));  // not before commit
    EXPECT_FALSE(staged.commit());
  }
  EXPECT_TRUE(fs::exists(out / "a.txt"));
  {
    StagedDirectory abandoned(fresh("never").string(), false, "test");  // an error midway: no commit
    std::ofstream(fs::path(abandoned.path()) / "b.txt") << "b";
  }
  EXPECT_FALSE(fs::exists(out.parent_path() / "never"));
  for (const auto& e : fs::directory_iterator(out.parent_path()))
    EXPECT_EQ(e.path().filename().string().find(".never.partial"), std::string::npos) << e.path();
  try {
    StagedDirectory refused(out.string(), false, "yoke test");
    FAIL() << "a folder that holds a.txt was not refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is not empty (it holds a.txt"), std::string::npos) << e.what();
  }
}

// A writer killed midway leaves ".NAME.partial-PID"; the next writer to NAME removes it when that
// process is gone, and leaves a live writer's alone.
TEST(StagedDirectory, WhatAKilledWriterLeftIsRemovedByTheNext) {
  const auto out = fresh("model");
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);  // a pid with no process (reuse within this test is unlikely)
  const auto stale = out.parent_path() / (".model.partial-" + std::to_string(gone));
  const auto live = out.parent_path() / (".model.partial-" + std::to_string(::getppid()));  // our parent runs
  for (const auto& d : {stale, live}) {
    fs::create_directories(d);
    std::ofstream(d / "weights") << "half";
  }
  {
    StagedDirectory staged(out.string(), false, "test");
    staged.commit();
  }
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live / "weights"));
  fs::remove_all(out.parent_path());
}

// --force replaces in one step: the new content in place, the old gone, no sibling left; and a
// replacement killed between the two renames of the fallback (NAME missing, its old content in
// ".NAME.replaced-PID" of a dead process) is put back by the next writer, never deleted unseen.
TEST(StagedDirectory, AReplacementIsOneStepAndAnInterruptedOneIsRecovered) {
  const auto out = fresh("data");
  fs::create_directories(out);
  std::ofstream(out / "old.txt") << "old";
  {
    StagedDirectory staged(out.string(), true, "test");
    std::ofstream(fs::path(staged.path()) / "new.txt") << "new";
    EXPECT_TRUE(staged.commit());
  }
  EXPECT_TRUE(fs::exists(out / "new.txt"));
  EXPECT_FALSE(fs::exists(out / "old.txt"));
  for (const auto& e : fs::directory_iterator(out.parent_path()))
    EXPECT_EQ(e.path().filename().string().rfind(".data.", 0), std::string::npos) << e.path();

  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  const auto aside = out.parent_path() / (".data.replaced-" + std::to_string(gone));
  fs::rename(out, aside);  // what the fallback leaves when killed between its renames
  try {
    StagedDirectory refused(out.string(), false, "test");  // the old content is back: not empty
    FAIL() << "the recovered folder was not found";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is not empty (it holds new.txt"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::exists(out / "new.txt"));
  EXPECT_FALSE(fs::exists(aside));
  fs::remove_all(out.parent_path());
}

TEST(StagedDirectory, TheOutputIsNeverWhatItReadsNorHoldsItNorLiesInIt) {
  const auto base = fresh("apart");
  fs::create_directories(base / "model");
  auto refusal = [&](const fs::path& out) {
    try {
      StagedDirectory staged(out.string(), true, "test", {{"--model", (base / "model").string()}});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(refusal(base / "model").find("is --model itself"), std::string::npos);
  EXPECT_NE(refusal(base / "model" / "").find("is --model itself"), std::string::npos);
  EXPECT_NE(refusal(base).find("holds --model"), std::string::npos);
  EXPECT_NE(refusal(base / "model" / "export").find("lies inside --model"), std::string::npos);
  EXPECT_NE(refusal(base / "." / "model" / ".." / "model").find("is --model itself"), std::string::npos);
  EXPECT_EQ(refusal(base / "model-export"), "(accepted)");  // a sibling whose name starts the same
  EXPECT_NE(refusal("").find("--out is empty"), std::string::npos);
  fs::remove_all(base);
}

}  // namespace
}  // namespace yoke
