// `yoke inspect`: what a trained model made of a few source words — the target word each is
// paired with under tie = shared-private (category, shared dimensions), and its nearest target
// words by cosine, for any sharing scheme.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "align/pair_data.h"
#include "align/pairing.h"
#include "analysis/neighbours.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "store/model_store.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace yoke::cli {
namespace {

// A word as typed ("dog") or as a piece ("▁dog"); the word-initial piece is tried first.
int find_piece(const Vocab& v, const std::string& word) {
  for (const std::string& p : {std::string("\xE2\x96\x81") + word, word}) {
    const int id = v.piece_to_id(p);
    if (id != Vocab::unk || p == v.piece(Vocab::unk)) return id;
  }
  return -1;
}

}  // namespace

int cmd_inspect(int argc, char** argv) {
  Command cmd("inspect",
              "For each source word given, prints its vocabulary piece, the target word it is paired with\n"
              "(tie = shared-private: category, shared dimensions, alignment score) and its nearest target\n"
              "words by cosine between its source row and the target embedding rows.\n\n"
              "example: yoke inspect --model runs/sp-ende --word man --word dog --top 5");
  ModelOptions model;
  add_model_options(cmd, model, /*with_device=*/false);
  std::vector<std::string> words_asked;
  int64_t top = 5;
  add_repeated(cmd, "--word", words_asked, "W", "source word or subword piece");
  add_value(cmd, "--top", top, "K", "nearest target words to list")->capture_default_str();
  if (!cmd.read(argc, argv)) return 0;
  if (words_asked.empty()) throw InputError("give at least one --word");
  const std::string dir = model.dir;
  auto m = load_model(dir, model.checkpoint, "cpu", ModelUse::read_weights);
  const auto& emb = *m.model->embeddings;
  if (!emb.source()) throw InputError("inspect needs a translation model (this one has no source side)");
  const at::Tensor src = emb.source()->full().detach(), tgt = emb.target().full().detach();

  std::vector<WordPair> pairs;
  PairingInput words;
  if (m.config.tie == Tie::shared_private) {
    words = vocabulary_words(dir);
    pairs = read_pairs((fs::path(dir) / "pairs.tsv").string(), words);
  }
  for (const auto& w : words_asked) {
    const int id = find_piece(m.src_vocab, w);
    if (id < 0) {
      std::printf("%s: not in the source vocabulary (pieces: ", w.c_str());
      for (const auto& p : m.src_vocab.encode_pieces(w)) std::printf("%s ", p.c_str());
      std::printf(")\n\n");
      continue;
    }
    std::printf("%s  (source piece %s, id %d, ‖e‖ = %.3f)\n", w.c_str(), m.src_vocab.piece(id).c_str(), id,
                src[id].norm().item<double>());
    if (m.config.tie == Tie::shared_private) {
      const WordPair* pair = nullptr;
      for (const auto& p : pairs) if (p.src_id == id) pair = &p;
      if (!pair) {
        std::printf("  paired with: none (all %d dimensions private)\n", m.config.d_model);
      } else {
        const double lambda[] = {m.config.lambda_lm, m.config.lambda_wf, m.config.lambda_ur};
        const long shared = std::lround(lambda[int(pair->category)] * m.config.d_model);
        std::printf("  paired with: %s  (category %s, score %.3f, shares dimensions 0–%ld of %d)\n",
                    m.tgt_vocab.piece(pair->tgt_id).c_str(), category_name(pair->category), pair->score, shared - 1,
                    m.config.d_model);
      }
    }
    std::printf("  nearest target words by cosine:");
    for (auto [row, cos] : nearest_by_cosine(src[id], tgt, top))
      std::printf("  %s %.3f", m.tgt_vocab.piece(int(row)).c_str(), cos);
    std::printf("\n\n");
  }
  return 0;
}

}  // namespace yoke::cli
