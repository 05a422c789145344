// A model directory stays what it was trained as (files written before keys lost their bias
// still load and resume): a resume refuses a changed model config, other
// vocabularies or a weights-only checkpoint_last; checkpoint_best is repaired after a kill between
// its two writes; translate refuses a replaced vocabulary; `yoke average` leaves the trainer's
// files alone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_helpers.h"
#include "model/transformer.h"
#include "store/checkpoint.h"
#include "store/model_store.h"
#include "util/dir_lock.h"

namespace fs = std::filesystem;
using namespace yoke;
using namespace yoke::test;

namespace {

std::vector<std::string> train_args(const fs::path& save_dir, int max_updates) {
  return tiny_train_args(save_dir, max_updates, 9);
}

// 20 updates, validated at 10 and 20, made once per process; tests copy it before changing it.
const fs::path& trained() {
  static const fs::path dir = train_into("resume-model", [](const fs::path& d) { return train_args(d, 20); });
  return dir;
}

fs::path copy_of_trained(const std::string& name) {
  const auto d = work_dir() / name;
  fs::remove_all(d);
  fs::copy(trained(), d, fs::copy_options::recursive);
  fs::remove(d / "yoke.lock");
  return d;
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// The same toy corpus prepared with a unigram vocabulary of the same size: the config (sizes,
// joint) matches the trained model's, the vocabulary does not.
const fs::path& other_vocab_data() {
  static const fs::path data = [] {
    auto p = synthetic_prepare_options((work_dir() / "corpus").string(), (work_dir() / "data-unigram").string());
    data_dir();  // writes the corpus
    p.vocab_size = 200;
    p.model_type = "unigram";
    std::ostringstream log;
    prepare_data(p, log);
    return work_dir() / "data-unigram";
  }();
  return data;
}

int64_t update_in(const fs::path& ckpt) {
  return read_checkpoint_header(ckpt.string()).meta.at("state").at("update").get<int64_t>();
}

}  // namespace

// Shapes that match are not enough: heads and output change what the weights compute.
TEST(ResumeCli, ChangedModelKeysAreRefusedByNameAndOtherChangesAreReported) {
  const auto dir = copy_of_trained("resume-config");
  const auto log = work_dir() / "resume-config.log";
  EXPECT_EQ(run(with(train_args(dir, 30), {"--heads", "4", "--output", "cosine"}), log), 2) << slurp(log);
  EXPECT_NE(slurp(log).find((dir / "checkpoint_last.ykp").string() + ": cannot resume: this run's config differs from "
                            "the checkpoint's in keys that cannot change within a run: heads 2 → 4, output dot → cosine"),
            std::string::npos) << slurp(log);
  // positions = learned adds a table the checkpoint lacks: an internal error with a backtrace before.
  EXPECT_EQ(run(with(train_args(dir, 30), {"--positions", "learned"}), log), 2) << slurp(log);
  EXPECT_NE(slurp(log).find("positions sinusoidal → learned"), std::string::npos) << slurp(log);
  EXPECT_EQ(slurp(log).find("internal error"), std::string::npos) << slurp(log);
  EXPECT_EQ(update_in(dir / "checkpoint_last.ykp"), 20);  // refused before anything was written

  ASSERT_EQ(run(with(train_args(dir, 30), {"--lr", "0.0005", "--patience", "3"}), log), 0) << slurp(log);
  EXPECT_NE(slurp(log).find("resume: config changed since " + (dir / "checkpoint_last.ykp").string() + ": save_dir " +
                            trained().string() + " → " + dir.string() +  // the directory was copied
                            ", lr 0.001 → 0.0005, max_updates 20 → 30, patience 0 → 3"),
            std::string::npos) << slurp(log);
  EXPECT_EQ(update_in(dir / "checkpoint_last.ykp"), 30);
}

// A numbered (or averaged) checkpoint named checkpoint_last: `internal error: map::at` before.
TEST(ResumeCli, AWeightsOnlyCheckpointLastIsRefused) {
  const auto dir = copy_of_trained("resume-weights-only");
  fs::copy_file(dir / "checkpoint_u10.ykp", dir / "checkpoint_last.ykp", fs::copy_options::overwrite_existing);
  const auto log = work_dir() / "resume-weights-only.log";
  EXPECT_EQ(run(train_args(dir, 30), log), 2) << slurp(log);
  EXPECT_NE(slurp(log).find((dir / "checkpoint_last.ykp").string() + ": holds weights only"), std::string::npos)
      << slurp(log);
}

// A kill after checkpoint_last (update 20, recorded best) was written and before it was copied to
// checkpoint_best leaves the best of update 10 behind: the next start puts the right one there.
TEST(ResumeCli, ACheckpointBestBehindTheRecordedBestIsRepaired) {
  const auto dir = copy_of_trained("resume-torn-best");
  const auto state = read_checkpoint_header((dir / "checkpoint_last.ykp").string()).meta.at("state");
  const int64_t best = state.at("best_update").get<int64_t>();
  ASSERT_EQ(update_in(dir / "checkpoint_best.ykp"), best);
  ASSERT_NE(best, 10) << "the best validation was the first: copying update 10 would tear nothing";
  fs::copy_file(dir / "checkpoint_u10.ykp", dir / "checkpoint_best.ykp", fs::copy_options::overwrite_existing);

  const auto log = work_dir() / "resume-torn-best.log";
  ASSERT_EQ(run(train_args(dir, 20), log), 0) << slurp(log);  // at its limit: resumes and stops at once
  EXPECT_NE(slurp(log).find("repaired " + (dir / "checkpoint_best.ykp").string() + ": it held update 10, but the best "
                            "validation was at update " + std::to_string(best)),
            std::string::npos) << slurp(log);
  EXPECT_EQ(update_in(dir / "checkpoint_best.ykp"), best);
  EXPECT_EQ(slurp(dir / "checkpoint_best.ykp"), slurp(dir / "checkpoint_last.ykp"));
}

// A kill after checkpoint_last (update 20, a validation) was written and before its numbered
// copy: averaging the last checkpoints took another set than the run without the kill (seen as
// Experiment.TinyGridRunsReportsAndResumes failing under load). The next start writes the copy.
TEST(ResumeCli, AMissingNumberedCheckpointOfTheLastValidationIsRepaired) {
  const auto dir = copy_of_trained("resume-torn-numbered");
  ASSERT_TRUE(fs::remove(dir / "checkpoint_u20.ykp"));
  const auto log = work_dir() / "resume-torn-numbered.log";
  ASSERT_EQ(run(train_args(dir, 20), log), 0) << slurp(log);  // at its limit: resumes and stops at once
  EXPECT_NE(slurp(log).find("repaired " + (dir / "checkpoint_u20.ykp").string() + ": it was missing"),
            std::string::npos) << slurp(log);
  // What Trainer::save writes there: checkpoint_last without the optimizer's moments.
  const auto repaired = load_checkpoint((dir / "checkpoint_u20.ykp").string());
  const auto original = load_checkpoint((trained() / "checkpoint_u20.ykp").string());
  EXPECT_EQ(repaired.meta, original.meta);
  ASSERT_EQ(repaired.tensors.size(), original.tensors.size());
  for (const auto& [name, t] : original.tensors) {
    ASSERT_TRUE(repaired.tensors.count(name)) << name;
    EXPECT_TRUE(repaired.tensors.at(name).equal(t)) << name;  // the same bytes, copied: exact
  }
  EXPECT_TRUE(fs::exists(dir / "checkpoint_u10.ykp")) << "keep_last keeps both";
  // Present, it is left alone.
  const auto before = fs::last_write_time(dir / "checkpoint_u20.ykp");
  ASSERT_EQ(run(train_args(dir, 20), log), 0) << slurp(log);
  EXPECT_EQ(slurp(log).find("repaired"), std::string::npos) << slurp(log);
  EXPECT_EQ(fs::last_write_time(dir / "checkpoint_u20.ykp"), before);
}

// Another data set (or the same one prepared again) with other vocabularies: the resumed run used
// to copy them over the model's own and train on under the old embeddings.
TEST(ResumeCli, DataWithOtherVocabulariesIsRefused) {
  const auto dir = copy_of_trained("resume-other-vocab");
  ASSERT_NE(slurp(other_vocab_data() / "spm.model"), slurp(dir / "spm.model"));
  const auto before = slurp(dir / "spm.model");
  auto args = train_args(dir, 30);
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i] == "--data") args[i + 1] = other_vocab_data().string();
  const auto log = work_dir() / "resume-other-vocab.log";
  EXPECT_EQ(run(args, log), 2) << slurp(log);
  EXPECT_NE(slurp(log).find((other_vocab_data() / "spm.model").string() + ": is not the vocabulary the model in " +
                            (dir / "checkpoint_last.ykp").string() + " was trained with, " +
                            (dir / "spm.model").string() + " (CRC-32 "),
            std::string::npos) << slurp(log);
  EXPECT_EQ(slurp(dir / "spm.model"), before);  // the model's own vocabulary stays
}

// The same vocabulary, other training files: the data prepared again with other shards, or its
// meta.json edited to drop or repeat one. Resuming used to go on over other pairs (44 of 45
// tensors off an uninterrupted run) and say nothing; the checkpoint records the files' checksums.
TEST(ResumeCli, ChangedTrainingFilesAreRefused) {
  const auto dir = copy_of_trained("resume-other-train");
  const auto data = work_dir() / "data-resume-other-train";
  fs::remove_all(data);
  fs::copy(data_dir(), data, fs::copy_options::recursive);
  auto args = train_args(dir, 30);
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i] == "--data") args[i + 1] = data.string();
  const auto log = work_dir() / "resume-other-train.log";
  const auto refused = [&](const std::string& words) {
    EXPECT_EQ(run(args, log), 2) << slurp(log);
    EXPECT_NE(slurp(log).find("cannot resume " + (dir / "checkpoint_last.ykp").string() + ": " + words), std::string::npos)
        << slurp(log);
    EXPECT_EQ(update_in(dir / "checkpoint_last.ykp"), 20);  // nothing trained
  };
  // meta.json listing train.bin twice.
  const auto meta_path = data / "meta.json";
  const std::string meta_text = slurp(meta_path);
  auto meta = nlohmann::json::parse(meta_text);
  meta["splits"]["train"]["shards"] = {"train.bin", "train.bin"};
  std::ofstream(meta_path) << meta.dump();
  refused("its training files are train.bin, train.bin, the checkpoint's train.bin");
  std::ofstream(meta_path) << meta_text;
  // train.bin with one byte changed (the same size).
  std::string bin = slurp(data / "train.bin");
  bin[bin.size() / 2] = char(bin[bin.size() / 2] ^ 1);
  std::ofstream(data / "train.bin", std::ios::binary) << bin;
  refused("train.bin is not the file the checkpoint was trained on");
  // The files it was trained on: the resume goes on.
  fs::copy_file(data_dir() / "train.bin", data / "train.bin", fs::copy_options::overwrite_existing);
  ASSERT_EQ(run(args, log), 0) << slurp(log);
  EXPECT_EQ(update_in(dir / "checkpoint_last.ykp"), 30);
}

// translate on a model directory whose spm.model was replaced after training.
TEST(ResumeCli, TranslateRefusesAReplacedVocabularyAndOldCheckpointsStillLoad) {
  const auto dir = copy_of_trained("translate-other-vocab");
  const auto src = (data_dir() / "test.toy.src.txt").string();
  const auto log = work_dir() / "translate-other-vocab.log";
  ASSERT_EQ(run({YOKE_BINARY, "translate", "--model", dir.string(), "--input", src, "--beam", "1", "--output",
                 (work_dir() / "tov.hyp").string()}, log), 0) << slurp(log);
  fs::copy_file(other_vocab_data() / "spm.model", dir / "spm.model", fs::copy_options::overwrite_existing);
  EXPECT_EQ(run({YOKE_BINARY, "translate", "--model", dir.string(), "--input", src, "--beam", "1"}, log), 2);
  EXPECT_NE(slurp(log).find((dir / "spm.model").string() + ": is not the vocabulary recorded in " +
                            (dir / "checkpoint_best.ykp").string() + " (CRC-32 "),
            std::string::npos) << slurp(log);

  // A checkpoint from before the record (no "vocab" in its meta) loads as it always did.
  auto c = load_checkpoint((dir / "checkpoint_best.ykp").string());
  ASSERT_TRUE(c.meta.contains("vocab"));
  c.meta.erase("vocab");
  save_checkpoint((dir / "checkpoint_best.ykp").string(), c);
  fs::copy_file(trained() / "spm.model", dir / "spm.model", fs::copy_options::overwrite_existing);
  EXPECT_EQ(run({YOKE_BINARY, "translate", "--model", dir.string(), "--input", src, "--beam", "1", "--output",
                 (work_dir() / "tov.hyp").string()}, log), 0) << slurp(log);
}

// Without the checksum record (an old checkpoint, an export whose metadata lost it), a vocabulary
// of another size than the model's rows is still refused: smaller gave garbage, larger indices
// past the matrix.
TEST(ResumeCli, AVocabularyOfAnotherSizeIsRefusedWithoutTheRecord) {
  const auto dir = copy_of_trained("translate-other-size");
  auto c = load_checkpoint((dir / "checkpoint_best.ykp").string());
  c.meta.erase("vocab");
  save_checkpoint((dir / "checkpoint_best.ykp").string(), c);
  auto p = synthetic_prepare_options((work_dir() / "corpus").string(), (work_dir() / "data-150").string());
  data_dir();  // writes the corpus
  p.vocab_size = 150;
  std::ostringstream quiet;
  prepare_data(p, quiet);
  fs::copy_file(work_dir() / "data-150" / "spm.model", dir / "spm.model", fs::copy_options::overwrite_existing);
  const auto log = work_dir() / "translate-other-size.log";
  EXPECT_EQ(run({YOKE_BINARY, "translate", "--model", dir.string(), "--input", (data_dir() / "test.toy.src.txt").string()},
                log), 2);
  EXPECT_NE(slurp(log).find((dir / "spm.model").string() + ": has 150 pieces, the model in " +
                            (dir / "checkpoint_best.ykp").string() + " 200 rows (tgt_vocab_size)"),
            std::string::npos)
      << slurp(log);
}

TEST(ResumeCli, AverageLeavesTheTrainersFilesAndLockedDirectoriesAlone) {
  const auto dir = copy_of_trained("average-guard");
  const auto log = work_dir() / "average-guard.log";
  for (const char* name : {"checkpoint_last.ykp", "checkpoint_best.ykp", "checkpoint_u20.ykp"}) {
    const auto before = slurp(dir / name);
    EXPECT_EQ(run({YOKE_BINARY, "average", "--model", dir.string(), "--last", "2", "--out", name}, log), 2) << name;
    EXPECT_NE(slurp(log).find((dir / name).string() + ": is a name `yoke train` writes"), std::string::npos)
        << slurp(log);
    EXPECT_EQ(slurp(dir / name), before) << name;
  }
  {
    // This process holds the directory as a running trainer would.
    DirLock trainer(lock_file_in(dir.string()), dir.string());
    EXPECT_EQ(run({YOKE_BINARY, "average", "--model", dir.string(), "--last", "2"}, log), 2);
    EXPECT_NE(slurp(log).find(dir.string() + ": in use by another yoke process (pid " + std::to_string(::getpid()) + ")"),
              std::string::npos) << slurp(log);
    EXPECT_FALSE(fs::exists(dir / "checkpoint_avg.ykp"));
  }
  EXPECT_EQ(run({YOKE_BINARY, "average", "--model", dir.string(), "--last", "2"}, log), 0) << slurp(log);
  EXPECT_TRUE(fs::exists(dir / "checkpoint_avg.ykp"));
}

// Files from before keys lost their bias (model/attention.h) hold X.kv_bias [2d], key half first,
// and Adam moments laid out with it. Made here from a current run by putting a key half back
// (random: it never mattered), they translate as the current files do and resume to the same
// weights, bit for bit, as the current run resumed on the same machine.
TEST(ResumeCli, FilesWithKeyBiasesTranslateAndResumeAsTheCurrentOnes) {
  const auto current = copy_of_trained("kv-current"), legacy = copy_of_trained("kv-legacy");
  const auto loaded = load_model(current.string());
  at::manual_seed(5);
  for (const char* file : {"checkpoint_last.ykp", "checkpoint_best.ykp"}) {
    auto c = load_checkpoint((legacy / file).string());
    size_t upgraded = 0;
    std::vector<at::Tensor> m, v;  // the moments, rebuilt parameter by parameter
    const bool trainer_state = c.tensors.count("optimizer.exp_avg") > 0;
    int64_t at = 0;
    for (const auto& p : loaded.model->named_parameters(true)) {
      const auto& name = p.key();
      const int64_t n = p.value().numel();
      const bool value_bias = name.size() > 7 && name.compare(name.size() - 7, 7, ".v_bias") == 0;
      if (value_bias) {
        const auto key = model_tensor_name(name.substr(0, name.size() - 7) + ".kv_bias");
        c.tensors[key] = at::cat({at::randn({n}), c.tensors.at(model_tensor_name(name))});
        c.tensors.erase(model_tensor_name(name));
        ++upgraded;
      }
      if (trainer_state) {
        for (auto* moments : {&m, &v}) {
          const auto& flat = c.tensors.at(moments == &m ? "optimizer.exp_avg" : "optimizer.exp_avg_sq");
          if (value_bias) moments->push_back(at::rand({n}));
          moments->push_back(flat.narrow(0, at, n));
        }
      }
      at += n;
    }
    ASSERT_EQ(upgraded, 3u) << "one encoder layer's self-attention, one decoder layer's self- and cross-attention";
    if (trainer_state) {
      c.tensors["optimizer.exp_avg"] = at::cat(m);
      c.tensors["optimizer.exp_avg_sq"] = at::cat(v);
    }
    save_checkpoint((legacy / file).string(), c);
  }

  const auto src = (data_dir() / "test.toy.src.txt").string();
  const auto log = work_dir() / "kv-legacy.log";
  for (const auto& dir : {current, legacy})
    ASSERT_EQ(run({YOKE_BINARY, "translate", "--model", dir.string(), "--input", src, "--beam", "2", "--output",
                   (dir / "test.hyp").string()}, log), 0) << slurp(log);
  EXPECT_EQ(slurp(legacy / "test.hyp"), slurp(current / "test.hyp"));

  for (const auto& dir : {current, legacy})
    ASSERT_EQ(run(train_args(dir, 30), log), 0) << slurp(log);
  const auto a = model_weights(load_checkpoint((current / "checkpoint_last.ykp").string()));
  const auto b = model_weights(load_checkpoint((legacy / "checkpoint_last.ykp").string()));
  ASSERT_EQ(update_in(legacy / "checkpoint_last.ykp"), 30);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) EXPECT_TRUE(at::equal(t, b.at(name))) << name;
}

// A run folder belongs to one run: a new run into a folder holding another run's checkpoints but
// no checkpoint_last is refused, naming them, and `--force` removes that run's files (only those)
// before training; every checkpoint carries its run's identity, which a resume keeps and
// `yoke average` checks.
TEST(ResumeCli, ANewRunNeverOverwritesAnotherRunsFolder) {
  const auto dir = copy_of_trained("one-run");
  fs::remove(dir / "checkpoint_last.ykp");
  std::ofstream(dir / "notes.txt") << "the user's own file";
  const auto best = slurp(dir / "checkpoint_best.ykp"), u20 = slurp(dir / "checkpoint_u20.ykp");
  const auto log = work_dir() / "one-run.log";
  EXPECT_EQ(run(train_args(dir, 10), log), 2) << slurp(log);
  EXPECT_NE(slurp(log).find("holds another run's checkpoints (checkpoint_best.ykp, checkpoint_u10.ykp, "
                            "checkpoint_u20.ykp)"),
            std::string::npos)
      << slurp(log);
  EXPECT_EQ(slurp(dir / "checkpoint_best.ykp"), best);  // nothing touched
  EXPECT_EQ(slurp(dir / "checkpoint_u20.ykp"), u20);
  // --force: the earlier run's files go first, so nothing of it mixes with the new one.
  ASSERT_EQ(run(with(train_args(dir, 10), {"--force"}), log), 0) << slurp(log);
  EXPECT_NE(slurp(log).find("--force: removed"), std::string::npos) << slurp(log);
  EXPECT_FALSE(fs::exists(dir / "checkpoint_u20.ykp"));
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
  const std::string run_id = read_checkpoint_header((dir / "checkpoint_last.ykp").string()).meta.at("run");
  EXPECT_EQ(run_id.size(), 16u);
  EXPECT_EQ(read_checkpoint_header((dir / "checkpoint_u10.ykp").string()).meta.at("run"), run_id);
  // A resume keeps the identity.
  ASSERT_EQ(run(train_args(dir, 20), log), 0) << slurp(log);
  EXPECT_EQ(read_checkpoint_header((dir / "checkpoint_u20.ykp").string()).meta.at("run"), run_id);

  // Another run's numbered checkpoint dropped in among them: average refuses the mix.
  const auto other = work_dir() / "one-run-other";
  fs::remove_all(other);
  ASSERT_EQ(run(train_args(other, 10), log), 0) << slurp(log);
  fs::copy_file(other / "checkpoint_u10.ykp", dir / "checkpoint_u15.ykp");
  EXPECT_EQ(run({YOKE_BINARY, "average", "--model", dir.string(), "--last", "3"}, log), 2);
  EXPECT_NE(slurp(log).find("its checkpoints come from two runs"), std::string::npos) << slurp(log);
  EXPECT_FALSE(fs::exists(dir / "checkpoint_avg.ykp"));
  fs::remove(dir / "checkpoint_u15.ykp");
  EXPECT_EQ(run({YOKE_BINARY, "average", "--model", dir.string(), "--last", "2"}, log), 0) << slurp(log);
}

// `average --out` is a checkpoint file name in the model directory, never another kind of file.
TEST(ResumeCli, AverageWritesOnlyACheckpointInTheModelDirectory) {
  const auto dir = copy_of_trained("average-out");
  const auto log = work_dir() / "average-out.log";
  const auto spm = slurp(dir / "spm.model");
  for (const std::string out : std::vector<std::string>{"spm.model", "metrics.jsonl", "../x.ykp", (dir / "y.ykp").string(), "", "sub/z.ykp"}) {
    EXPECT_EQ(run({YOKE_BINARY, "average", "--model", dir.string(), "--last", "2", "--out", out}, log), 2) << out;
    EXPECT_NE(slurp(log).find("give a checkpoint file name in the model directory"), std::string::npos)
        << out << ": " << slurp(log);
  }
  EXPECT_EQ(slurp(dir / "spm.model"), spm);
  EXPECT_FALSE(fs::exists(work_dir() / "x.ykp"));
  std::ofstream(dir / "notes.ykp") << "not a checkpoint";
  EXPECT_EQ(run({YOKE_BINARY, "average", "--model", dir.string(), "--last", "2", "--out", "notes.ykp"}, log), 2);
  EXPECT_NE(slurp(log).find("is not a yoke checkpoint"), std::string::npos) << slurp(log);
  EXPECT_EQ(slurp(dir / "notes.ykp"), "not a checkpoint");
  // An earlier average is replaced.
  ASSERT_EQ(run({YOKE_BINARY, "average", "--model", dir.string(), "--last", "1", "--out", "avg2.ykp"}, log), 0);
  EXPECT_EQ(run({YOKE_BINARY, "average", "--model", dir.string(), "--last", "2", "--out", "avg2.ykp"}, log), 0)
      << slurp(log);
}
