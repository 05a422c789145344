// yoke-engine: train, decode and study text-generation models with shared embeddings. Users run
// it through `yoke`, the starter (src/starter/starter.cpp).
#include <sys/prctl.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "util/error.h"
#include "util/fork_server.h"
#include "util/progress.h"
#include "util/thread_policy.h"
#include "util/version.h"

#include <torch/version.h>

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
};

const Command kCommands[] = {
    {"demo", yoke::cli::cmd_demo, "generate a toy language pair, train on it, translate and score (a few minutes)"},
    {"prepare", yoke::cli::cmd_prepare, "train SentencePiece on parallel text and binarize it into a data directory"},
    {"train", yoke::cli::cmd_train, "train a model from a config (resumes when its save_dir has a checkpoint)"},
    {"translate", yoke::cli::cmd_translate, "translate raw text with a trained model (beam or greedy search)"},
    {"score-pairs", yoke::cli::cmd_score_pairs, "the model's log-probability of given translations (rerank, filter)"},
    {"serve", yoke::cli::cmd_serve, "serve models over HTTP: JSON /translate, /generate, /health, /metrics"},
    {"score", yoke::cli::cmd_score, "BLEU, chrF and chrF++ exactly as sacreBLEU computes them"},
    {"average", yoke::cli::cmd_average, "average the last N checkpoints of a model"},
    {"quantize", yoke::cli::cmd_quantize, "an int8 copy of a model for fast decoding on the CPU"},
    {"export", yoke::cli::cmd_export, "a model as safetensors + config.json + vocabularies (PyTorch, other toolkits)"},
    {"import", yoke::cli::cmd_import, "an exported model (safetensors) back into a model directory"},
    {"align", yoke::cli::cmd_align, "word-align tokenized parallel text (IBM-2 with a diagonal prior)"},
    {"pair", yoke::cli::cmd_pair, "pair source and target words for tie = shared-private"},
    {"experiment", yoke::cli::cmd_experiment, "run a grid of variants × seeds and write the report (table and pictures)"},
    {"report", yoke::cli::cmd_report, "rebuild an experiment's report from its folder's files; --export a folder to commit"},
    {"compare", yoke::cli::cmd_compare, "is B better than A? BLEU over seeds and test sentences, two-sided p"},
    {"analyze", yoke::cli::cmd_analyze, "norms, estimator properties, tying gap and a PCA picture of a model"},
    {"inspect", yoke::cli::cmd_inspect, "a source word's paired target word, shared dimensions and nearest target words"},
    {"eval-lm", yoke::cli::cmd_eval_lm, "perplexity of a language model on text, per subword and per word"},
    {"generate", yoke::cli::cmd_generate, "continue a prompt with a language model (greedy, top-k, top-p)"},
    {"params", yoke::cli::cmd_params, "parameter accounting of a config: Params, Emb., Red. (no data needed)"},
};

void print_help() {
  std::cout << "yoke — text-generation models with shared input/output embeddings\n\n"
               "usage: yoke COMMAND [options]    (yoke COMMAND --help for its options; yoke --version)\n\ncommands:\n";
  for (const auto& c : kCommands) std::cout << "  " << c.name << std::string(12 - std::strlen(c.name), ' ') << c.summary << "\n";
}

// Output to a full disk or a closed pipe must not pass for success: stdio reports a failed write
// only when its buffer is flushed. Returns false (having said so) when standard output failed.
bool standard_output_written(const std::string& who) {
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::cerr << who << ": error: cannot write standard output: " << std::strerror(errno) << std::endl;
    return false;
  }
  return true;
}

// One write for the whole line: workers of `--nproc` and the launcher share this stderr, and a
// line written in pieces interleaves with theirs.
void error_line(const std::string& line) { std::cerr << (line + "\n") << std::flush; }

int run_command_line(int argc, char** argv) {
  yoke::use_fast_math_library_settings(argv);
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    print_help();
    if (!standard_output_written("yoke")) return 1;
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "version")) {
    std::cout << "yoke " << yoke::yoke_version() << " (commit " << yoke::build_commit() << ", LibTorch " << TORCH_VERSION
              << ")\n";
    return standard_output_written("yoke") ? 0 : 1;
  }
  for (const auto& c : kCommands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    try {
      const int rc = c.run(argc, argv);
      if (!standard_output_written(std::string("yoke ") + c.name)) return 1;
      return rc;
    } catch (const yoke::InputError& e) {
      yoke::clear_progress_line();
      error_line(std::string("yoke ") + c.name + ": error: " + e.what());
      return 2;
    } catch (const yoke::RunError& e) {
      yoke::clear_progress_line();
      error_line(std::string("yoke ") + c.name + ": error: " + e.what());
      return 1;
    } catch (const std::filesystem::filesystem_error& e) {
      yoke::clear_progress_line();
      // A path the user gave that the file system refuses (a loop of symbolic links, no permission,
      // a full disk): the path and the cause, as for any input of theirs, not an internal error.
      error_line(std::string("yoke ") + c.name + ": error: " +
                 (e.path1().empty() ? std::string() : e.path1().string() + ": ") + e.code().message() +
                 (e.path2().empty() ? "" : " (with " + e.path2().string() + ")"));
      return 2;
    } catch (const std::exception& e) {
      yoke::clear_progress_line();
      error_line(std::string("yoke ") + c.name + ": internal error: " + e.what());
      return 1;
    }
  }
  std::cerr << "yoke: unknown command '" << argv[1] << "'\n\n";
  print_help();
  return 2;
}

}  // namespace

// `yoke --fork-server FD` (not in --help): runs command lines sent on the socket FD, each in a
// fork of this process with its libraries loaded once (util/fork_server.h; the tests' ForkClient).
int main(int argc, char** argv) {
  // The name users know in top, pgrep -x and killall, which take it from the file the starter ran.
  ::prctl(PR_SET_NAME, "yoke", 0, 0, 0);
  if (argc == 3 && !std::strcmp(argv[1], "--fork-server")) return yoke::serve_forks(std::atoi(argv[2]), run_command_line);
  return run_command_line(argc, argv);
}
