#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "decode/translator.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "text/corpus.h"
#include "text/prepare.h"
#include "text/synthetic.h"
#include "train/model_store.h"
#include "train/trainer.h"
#include "util/progress.h"

namespace fs = std::filesystem;

namespace yoke::cli {

int cmd_demo(int argc, char** argv) {
  Args args("demo",
            "The whole pipeline on a toy language pair the demo generates itself (a bilingual lexicon,\n"
            "shared numbers and names, SVO→SOV word order): corpus → SentencePiece → Transformer with\n"
            "three-way tied embeddings → beam search → BLEU/chrF. Re-running continues where it stopped.",
            {{"out", "DIR", "working directory", "demo-run"},
             {"minutes", "M", "training time", "4"},
             {"threads", "N", "CPU threads", "all cores"},
             {"set", "KEY=VALUE", "override a training config key", "", true}});
  if (!args.parse(argc, argv, 2)) return 0;
  const fs::path out = args.get("out");
  const fs::path corpus = out / "corpus", data = out / "data", model = out / "model";
  fs::create_directories(out);

  if (!fs::exists(corpus / "test.tgt")) {
    std::cerr << "[1/4] generating the toy corpus in " << corpus.string() << std::endl;
    write_synthetic_corpus(corpus.string(), SyntheticOptions{});
  }
  if (!fs::exists(data / "meta.json")) {
    std::cerr << "[2/4] training a joint BPE vocabulary and binarizing" << std::endl;
    PrepareOptions p;
    p.train_src = (corpus / "train.src").string();
    p.train_tgt = (corpus / "train.tgt").string();
    p.valid_src = (corpus / "valid.src").string();
    p.valid_tgt = (corpus / "valid.tgt").string();
    p.tests = {{(corpus / "test.src").string(), (corpus / "test.tgt").string()}};
    p.test_names = {"toy"};
    p.out_dir = data.string();
    p.joint = true;
    p.vocab_size = 1000;
    prepare_data(p, std::cerr);
  }

  std::cerr << "[3/4] training (" << args.get("minutes") << " minutes; Ctrl-C saves, re-run resumes)" << std::endl;
  Config cfg;
  cfg.data = data.string();
  cfg.save_dir = model.string();
  cfg.tie = "all";
  cfg.d_model = 128;
  cfg.heads = 4;
  cfg.ffn_dim = 512;
  cfg.encoder_layers = cfg.decoder_layers = 2;
  cfg.max_tokens = 2048;
  cfg.lr = 2e-3;
  cfg.warmup = 300;
  cfg.valid_interval = 250;
  cfg.valid_bleu_sentences = 200;
  cfg.max_minutes = args.get_double("minutes");
  cfg.log_interval = 25;
  if (args.has("threads")) cfg.threads = args.get_int("threads");
  apply_overrides(cfg, args.all("set"), "--set");
  install_stop_handlers();
  auto r = train(cfg, std::cerr);
  if (r.stop_reason == "interrupted") return 130;

  std::cerr << "[4/4] translating the test set (beam 5)" << std::endl;
  auto m = load_model(model.string());
  const auto src = read_lines((data / "test.toy.src.txt").string());
  const auto ref = read_lines((data / "test.toy.tgt.txt").string());
  SearchOptions so;
  Progress bar("translate", double(src.size()), "sent", 30.0);
  auto hyp = translate_text(*m.model, m.src_vocab, m.tgt_vocab, src, so, 6000, [&](size_t d) { bar.update(double(d)); });
  bar.finish();
  std::ofstream(out / "test.hyp") << [&] { std::string s; for (auto& h : hyp) s += h + "\n"; return s; }();
  const auto bleu = corpus_bleu(hyp, ref);
  std::cout << "\nexamples:\n";
  for (size_t i = 0; i < std::min<size_t>(3, src.size()); ++i)
    std::cout << "  source:    " << src[i] << "\n  output:    " << hyp[i] << "\n  reference: " << ref[i] << "\n\n";
  std::printf("test BLEU = %.2f  chrF = %.2f  (%zu sentences, beam 5; %lld updates, %.0f tokens/s)\n", bleu.score,
              corpus_chrf(hyp, ref), src.size(), (long long)r.updates, r.tokens_per_s);
  std::cout << "model in " << model.string() << "; try: yoke translate --model " << model.string() << " < "
            << (corpus / "test.src").string() << std::endl;
  return 0;
}

}  // namespace yoke::cli
