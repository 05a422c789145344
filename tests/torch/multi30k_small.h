// A small en-de model trained on 3000 Multi30k pairs (joint BPE 1000, d = 32, 1+1 layers, 300
// updates at one thread: ~15 s), for the tests that check another runtime against `yoke translate`
// on real sentences: its translations have some structure, so that searches meet real near-ties and
// varied lengths rather than one repeated token. Empty when ../shared/data is absent (the caller skips).
#pragma once
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_helpers.h"
#include "text/corpus.h"
#include "text/prepare.h"

namespace yoke::test {

struct Multi30kSmall {
  fs::path data, model;  // the prepared data and the trained model directory
  fs::path test_source() const { return data / "test.flickr.src.txt"; }  // 100 test_2016_flickr sentences
};

// The first `n` lines of a Multi30k file into `out`.
inline void multi30k_head(const fs::path& from, size_t n, const fs::path& out) {
  const auto lines = read_lines(from.string());
  std::ofstream f(out);
  for (size_t i = 0; i < n && i < lines.size(); ++i) f << lines[i] << "\n";
}

// Prepared and trained under work_dir()/`name`-*; `train_args` are added to the training command;
// `joint` = false gives each side a vocabulary of 1000 (spm.src.model, spm.tgt.model).
inline Multi30kSmall multi30k_small_model(const std::string& name, const std::vector<std::string>& train_args = {},
                                          bool joint = true) {
  const fs::path m30k = fs::path(YOKE_SHARED_DIR) / "data/multi30k";
  if (!fs::exists(m30k / "train.en.gz")) return {};
  const auto corpus = work_dir() / (name + "-corpus");
  fs::create_directories(corpus);
  multi30k_head(m30k / "train.en.gz", 3000, corpus / "train.en");
  multi30k_head(m30k / "train.de.gz", 3000, corpus / "train.de");
  multi30k_head(m30k / "val.en.gz", 100, corpus / "valid.en");
  multi30k_head(m30k / "val.de.gz", 100, corpus / "valid.de");
  multi30k_head(m30k / "test_2016_flickr.en.gz", 100, corpus / "test.en");
  multi30k_head(m30k / "test_2016_flickr.de.gz", 100, corpus / "test.de");
  PrepareOptions p;
  p.train_src = (corpus / "train.en").string();
  p.train_tgt = (corpus / "train.de").string();
  p.valid_src = (corpus / "valid.en").string();
  p.valid_tgt = (corpus / "valid.de").string();
  p.tests = {{(corpus / "test.en").string(), (corpus / "test.de").string()}};
  p.test_names = {"flickr"};
  p.out_dir = (work_dir() / (name + "-data")).string();
  p.vocab_size = 1000;
  p.joint = joint;
  p.threads = 1;
  std::ostringstream prepare_log;
  prepare_data(p, prepare_log);
  Multi30kSmall m;
  m.data = p.out_dir;
  m.model = train_into(name + "-model", [&](const fs::path& dir) {
    std::vector<std::string> args{YOKE_BINARY, "train", "--data", p.out_dir, "--save_dir", dir.string(),
                                  "--d_model", "32", "--heads", "2", "--ffn_dim", "64", "--encoder_layers", "1",
                                  "--decoder_layers", "1", "--max_tokens", "1000", "--max_updates", "300",
                                  "--valid_interval", "300", "--valid_bleu", "false", "--threads", "1",
                                  "--warmup", "30", "--lr", "0.005", "--log_interval", "100", "--seed", "1"};
    args.insert(args.end(), train_args.begin(), train_args.end());
    return args;
  });
  return m;
}

}  // namespace yoke::test
