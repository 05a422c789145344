// Decoding as practitioners use it: ensembles, sampling, target prefixes, lexical constraints,
// alignments from the cross-attention and a lexical shortlist, on tiny models built here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <regex>
#include <set>

#include <poll.h>

#include "cli_helpers.h"
#include "text/corpus.h"
#include "copy_task.h"
#include "decode/constraints.h"
#include "decode/force_decode.h"
#include "decode/search.h"
#include "decode/shortlist.h"
#include "decode/batched_decoding.h"
#include "decode/word_alignment.h"
#include "store/model_store.h"
#include "tiny_model.h"
#include "util/error.h"
#include "margin.h"

using namespace yoke;
using namespace yoke::test;

namespace {

std::shared_ptr<Transformer> random_model(uint64_t seed, Estimator output = Estimator::dot, const std::string& arch = "") {
  at::manual_seed(seed);
  auto cfg = tiny_config(Tie::all, output);
  if (!arch.empty()) {
    cfg.set("arch", arch);
    cfg.encoder_kernels = "3,3";
    cfg.decoder_kernels = "3,3";
    cfg.validate();
  }
  auto model = build_model(cfg);
  model->eval();
  return model;
}

bool contains_phrase(const std::vector<int>& tokens, const std::vector<int>& phrase) {
  return std::search(tokens.begin(), tokens.end(), phrase.begin(), phrase.end()) != tokens.end();
}

}  // namespace

// An ensemble of a model with itself: each step's scores are 0.5·a + 0.5·a, which is a exactly in
// IEEE arithmetic (halving and doubling are exact away from subnormals), so the search makes the
// same choices with the same scores, bit for bit.
TEST(Ensemble, OfAModelWithItselfIsTheModel) {
  auto model = random_model(31);
  const auto sources = random_sentences(10, 9, 24, 32);
  Ensemble twice({model.get(), model.get()}, {1.0, 1.0});
  for (int beam : {1, 4}) {
    SearchOptions o;
    o.beam = beam;
    EXPECT_EQ(translate_ids(twice, sources, o, 100000), translate_ids(*model, sources, o, 100000)) << "beam " << beam;
    const auto one = translate_ids_nbest(*model, sources, o, beam, 100000);
    const auto two = translate_ids_nbest(twice, sources, o, beam, 100000);
    for (size_t i = 0; i < sources.size(); ++i) {
      ASSERT_EQ(one[i].size(), two[i].size());
      for (size_t h = 0; h < one[i].size(); ++h) {
        EXPECT_EQ(one[i][h].tokens, two[i][h].tokens);
        EXPECT_EQ(one[i][h].score, two[i][h].score);
      }
    }
  }
  const auto targets = random_sentences(10, 9, 24, 33);
  const auto alone = force_decode(*model, sources, targets, 1.0, 100000);
  const auto paired = force_decode(twice, sources, targets, 1.0, 100000);
  for (size_t i = 0; i < alone.size(); ++i) EXPECT_EQ(alone[i].token_log_probs, paired[i].token_log_probs);
}

// Mixed architectures and estimators: the ensemble's forced log-probability of each token is the
// weighted mean of the members' (weights normalised: 3:1 is 0.75/0.25). Float sums of two terms
// of size ≤ ~10 differ from the separately computed mean by at most a few ulps: 1e-5.
TEST(Ensemble, ScoresAreTheWeightedMeanOfTheMembers) {
  auto a = random_model(41, Estimator::dot);
  auto b = random_model(42, Estimator::cosine, "lightconv");
  const auto sources = random_sentences(8, 9, 24, 43);
  const auto targets = random_sentences(8, 9, 24, 44);
  Ensemble both({a.get(), b.get()}, {3.0, 1.0});
  const auto fa = force_decode(*a, sources, targets, 1.0, 100000);
  const auto fb = force_decode(*b, sources, targets, 1.0, 100000);
  const auto fe = force_decode(both, sources, targets, 1.0, 100000);
  for (size_t i = 0; i < fe.size(); ++i)
    for (size_t j = 0; j < fe[i].token_log_probs.size(); ++j)
      YOKE_EXPECT_NEAR(fe[i].token_log_probs[j], 0.75 * fa[i].token_log_probs[j] + 0.25 * fb[i].token_log_probs[j], 1e-5);
  // The search decodes with the same numbers: its scores are the forced ones (as for one model).
  SearchOptions o;
  o.beam = 3;
  const auto lists = translate_ids_nbest(both, sources, o, 1, 100000);
  std::vector<std::vector<int>> best;
  for (const auto& l : lists) best.push_back(l.front().tokens);
  const auto forced = force_decode(both, sources, best, 1.0, 100000);
  for (size_t i = 0; i < lists.size(); ++i) YOKE_EXPECT_NEAR(forced[i].log_prob, lists[i].front().log_prob, 1e-4) << i;
}

TEST(Ensemble, WeightsMustMatchTheModels) {
  auto a = random_model(41);
  EXPECT_THROW(Ensemble({a.get(), a.get()}, {1.0}), InputError);
  EXPECT_THROW(Ensemble({a.get(), a.get()}, {1.0, -1.0}), InputError);
  // Huge weights whose sum overflows are still weights: 1e308:1e308 is 1:1 (a few ulps of room).
  const Ensemble huge({a.get(), a.get()}, {1e308, 1e308});
  ASSERT_EQ(huge.weights.size(), 2u);
  for (double w : huge.weights) YOKE_EXPECT_NEAR(w, 0.5, 1e-12);
}

// Sampling draws from each sentence's own generator (seed, input index): batching and the order
// of batches do not change what a sentence gets; another seed does.
TEST(Sampling, IsReproduciblePerSentenceAndDependsOnTheSeed) {
  auto model = random_model(51);
  const auto sources = random_sentences(16, 9, 24, 52);
  for (Sampling method : {Sampling::topk, Sampling::topp}) {
    SearchOptions o;
    o.sampling = method;
    o.topk = 8;
    o.topp = 0.95;
    o.seed = 7;
    const auto big = translate_ids(*model, sources, o, 100000);
    const auto small = translate_ids(*model, sources, o, 20);  // a sentence or two per batch
    EXPECT_EQ(big, small);
    o.seed = 8;
    EXPECT_NE(translate_ids(*model, sources, o, 100000), big);
    // A sentence translated alone, as line 5 of a stream would be, gets what it got in the file.
    TranslateExtras extras;
    extras.first_index = 5;
    o.seed = 7;
    const auto alone = translate_ids_nbest(*model, {sources[5]}, o, 1, 100000, {}, extras);
    EXPECT_EQ(alone[0].front().tokens, big[5]);
  }
}

// Top-1 sampling always takes the most likely token: greedy search's output.
TEST(Sampling, TopOneIsGreedy) {
  auto model = random_model(53);
  const auto sources = random_sentences(12, 9, 24, 54);
  SearchOptions greedy;
  greedy.beam = 1;
  SearchOptions top1 = greedy;
  top1.sampling = Sampling::topk;
  top1.topk = 1;
  EXPECT_EQ(translate_ids(*model, sources, top1, 100000), translate_ids(*model, sources, greedy, 100000));
}

TEST(Prefix, TranslationsContinueTheirPrefix) {
  auto model = random_model(61);
  const auto sources = random_sentences(8, 9, 24, 62);
  std::vector<TargetGuide> guides(sources.size());
  for (size_t i = 0; i < guides.size(); i += 2) guides[i].prefix = {int(5 + i), 7, int(20 - i)};  // every other sentence
  TranslateExtras extras;
  extras.guides = &guides;
  SearchOptions beam;
  beam.beam = 4;
  SearchOptions sampled = beam;
  sampled.sampling = Sampling::topk;
  const auto plain = translate_ids_nbest(*model, sources, beam, 1, 100000);
  for (const auto& o : {beam, sampled}) {
    const auto out = translate_ids_nbest(*model, sources, o, 1, 100000, {}, extras);
    for (size_t i = 0; i < sources.size(); ++i) {
      const auto& tokens = out[i].front().tokens;
      ASSERT_GE(tokens.size(), guides[i].prefix.size());
      EXPECT_TRUE(std::equal(guides[i].prefix.begin(), guides[i].prefix.end(), tokens.begin())) << i;
      if (guides[i].prefix.empty() && o.sampling == Sampling::none) EXPECT_EQ(tokens, plain[i].front().tokens) << i;
    }
  }
}

TEST(Constraints, StateFollowsPhrasesAndBreaksOff) {
  const std::vector<std::vector<int>> c = {{5, 6, 7}, {9}};
  auto s = initial_constraint_state(2);
  EXPECT_EQ(s.wanted(c), (std::vector<int>{5, 9}));
  s = s.after(5, c).after(6, c);
  EXPECT_EQ(s.tokens_met(c), 2);
  EXPECT_EQ(s.wanted(c), std::vector<int>{7});
  auto broken = s.after(9, c);  // breaks the phrase off, meets the other one
  EXPECT_EQ(broken.tokens_met(c), 1);
  EXPECT_TRUE(broken.met[1]);
  s = s.after(7, c);
  EXPECT_TRUE(s.met[0]);
  EXPECT_FALSE(s.all_met());
  EXPECT_TRUE(s.after(9, c).all_met());
}

TEST(Constraints, BeamIsSharedAmongBanks) {
  // Bank 2 scores worst but keeps its share: 4 slots over 3 banks give each bank one, and the
  // slot left over goes to the highest bank with candidates left (bank 1), not to the best score.
  std::vector<ConstraintCandidate> c = {{0, 10, -1, 0}, {0, 11, -2, 0}, {0, 12, -3, 0}, {1, 13, -4, 1},
                                        {1, 14, -5, 1}, {2, 15, -9, 2}};
  const auto kept = allocate_beam(c, 4, 2);
  ASSERT_EQ(kept.size(), 4u);
  std::set<int64_t> tokens;
  for (const auto& k : kept) tokens.insert(k.token);
  EXPECT_EQ(tokens, (std::set<int64_t>{10, 13, 14, 15}));
}

// Synthetic data: for each sentence a two-token phrase that the unconstrained beam output lacks;
// the constrained output holds it, for one phrase and for two.
TEST(Constraints, ConstrainedOutputHoldsPhrasesTheUnconstrainedLacks) {
  auto model = random_model(71);
  const auto sources = random_sentences(10, 9, 24, 72);
  SearchOptions o;
  o.beam = 4;
  const auto plain = translate_ids(*model, sources, o, 100000);
  std::vector<TargetGuide> one(sources.size()), two(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    for (int a = 4; a < 24 && one[i].constraints.empty(); ++a)
      for (int b = 4; b < 24; ++b)
        if (!contains_phrase(plain[i], {a, b}) && a != b) {
          one[i].constraints = {{a, b}};
          two[i].constraints = {{a, b}, {b == 23 ? 22 : b + 1}};
          break;
        }
    ASSERT_FALSE(contains_phrase(plain[i], one[i].constraints[0]));
  }
  for (const auto* guides : {&one, &two}) {
    TranslateExtras extras;
    extras.guides = guides;
    const auto out = translate_ids_nbest(*model, sources, o, 1, 100000, {}, extras);
    for (size_t i = 0; i < sources.size(); ++i)
      for (const auto& phrase : (*guides)[i].constraints)
        EXPECT_TRUE(contains_phrase(out[i].front().tokens, phrase)) << "sentence " << i;
  }
}

TEST(Alignment, WordsJoinTheirSubwords) {
  // Target "▁a ▁bc d" (words a, bcd) over source "▁x y ▁z" (words xy, z): rows per target subword + eos.
  const std::vector<std::vector<float>> att = {{0.8f, 0.1f, 0.05f, 0.05f}, {0.0f, 0.1f, 0.8f, 0.1f},
                                               {0.1f, 0.0f, 0.8f, 0.1f}, {0.3f, 0.3f, 0.3f, 0.1f}};
  const std::vector<std::string> src = {"\xE2\x96\x81x", "y", "\xE2\x96\x81z"}, tgt = {"\xE2\x96\x81" "a", "\xE2\x96\x81" "bc", "d"};
  EXPECT_EQ(format_alignment(att, src, tgt, {false, false}), "0-0 2-1 2-2");
  EXPECT_EQ(format_alignment(att, src, tgt, {false, true}), "0-0 1-1");
  EXPECT_EQ(format_alignment(att, src, tgt, {true, true}), "0.900,0.050 0.100,0.800");
}

// A model trained to copy its input attends to the source position it copies: its hard
// alignments agree with the diagonal on at least 90% of the target subwords. It trains until it
// copies every sentence of a probe set (other sentences than those tested), checked every 50
// updates: a fixed number of updates was enough on some BLAS kernel families and not on others
// (23 of 30 copied under Prescott's after 300).
TEST(Alignment, CopyTaskAlignsTheDiagonal) {
  at::manual_seed(81);
  auto cfg = tiny_config(Tie::all, Estimator::dot, TinySize{24, 32, 2, 64});
  auto model = build_model(cfg);
  std::vector<at::Tensor> params;
  for (auto& p : model->parameters()) params.push_back(p);
  FlatAdam opt(params, AdamOptions{});
  const auto probe = random_sentences(30, 8, 24, 83);
  SearchOptions o;
  o.beam = 3;
  o.alignment = true;
  const auto copies_all = [&] {
    model->eval();
    const auto out = translate_ids_nbest(*model, probe, o, 1, 100000);
    for (size_t i = 0; i < probe.size(); ++i)
      if (out[i].front().tokens != probe[i]) return false;
    return true;
  };
  int step = 0;
  for (; step < 2000 && !(step % 50 == 0 && step >= 200 && copies_all()); ++step) {
    model->train();
    auto src = random_source(32, 8, 24, 1000 + uint64_t(step));
    auto tgt_in = at::cat({at::full({32, 1}, Vocab::bos, at::kLong), src.narrow(1, 0, src.size(1) - 1)}, 1);
    tgt_in.masked_fill_(tgt_in.eq(Vocab::eos), Vocab::pad);
    opt.zero_grad();
    auto enc = model->encode(src);
    auto sel = select_real_positions(model->decode(tgt_in, &enc), src, Vocab::pad);
    auto l = label_smoothed_loss(model->logits(sel.hidden), sel.target, 0.0);
    l.loss.backward();
    opt.scale_grad(1.0 / double(l.tokens));
    opt.step(3e-3);
  }
  ASSERT_LT(step, 2000) << "the model did not learn to copy its probe sentences in 2000 updates";
  std::cout << "[   info   ] copies its probe sentences after " << step << " updates" << std::endl;
  model->eval();
  // 100 unseen sentences: how many of them a model that copies its probe also copies varies with
  // the family's sums and the dropout masks (26 to 30 of 30 over the all-families sweep), so 30
  // was too few to hold a floor with a margin.
  const auto sources = random_sentences(100, 8, 24, 82);
  const auto lists = translate_ids_nbest(*model, sources, o, 1, 100000);
  size_t agree = 0, total = 0, copied = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    const auto& h = lists[i].front();
    copied += h.tokens == sources[i];
    std::vector<std::string> src(sources[i].size(), "\xE2\x96\x81w"), tgt(h.tokens.size(), "\xE2\x96\x81w");
    const auto m = unit_attention(h.attention, src, tgt, false);
    ASSERT_EQ(m.size(), h.tokens.size());
    for (size_t t = 0; t < m.size(); ++t, ++total)
      agree += size_t(std::max_element(m[t].begin(), m[t].end()) - m[t].begin()) == t;
  }
  std::cout << "[   info   ] copied " << copied << ", aligned " << agree << " of " << total << std::endl;
  // The claim is the alignment below; this only guards that it is measured on a model that
  // copies (an untrained one copies none).
  YOKE_EXPECT_SHORTFALL(double(copied), 0.6 * double(sources.size()), double(sources.size()))
      << "the model copies its probe sentences but not these";
  YOKE_EXPECT_SHORTFALL(double(agree), 0.9 * double(total), double(total)) << agree << " of " << total;
}

// A shortlist of the whole vocabulary computes the same logits through another product: the
// outputs are the same and the scores equal up to float rounding (1e-4 on sums of ~10 terms);
// a short one keeps the outputs inside it. Every estimator, as the output layer is affine in each.
TEST(Shortlist, WholeVocabularyChangesNothingAndShortOnesConfine) {
  for (auto output : {Estimator::dot, Estimator::l2, Estimator::square, Estimator::distance, Estimator::cosine}) {
    auto model = random_model(91, output);
    const auto sources = random_sentences(8, 9, 24, 92);
    SearchOptions o;
    o.beam = 3;
    const auto plain = translate_ids_nbest(*model, sources, o, 1, 100000);
    std::vector<std::vector<int>> all(24);
    Shortlist everything(all, std::vector<int>{4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}, 24);
    o.shortlist = &everything;
    const auto same = translate_ids_nbest(*model, sources, o, 1, 100000);
    for (size_t i = 0; i < sources.size(); ++i) {
      EXPECT_EQ(same[i].front().tokens, plain[i].front().tokens) << int(output);
      YOKE_EXPECT_NEAR(same[i].front().score, plain[i].front().score, 1e-4);
    }
    std::vector<std::vector<int>> few(24);
    for (int s = 4; s < 24; ++s) few[size_t(s)] = {s};  // a source id allows only itself
    Shortlist copy_only(few, {}, 24);
    o.shortlist = &copy_only;
    // A budget of one token × beam 3: one sentence a batch, so each may only copy its own ids.
    const auto confined = translate_ids_nbest(*model, sources, o, 1, 3);
    for (size_t i = 0; i < sources.size(); ++i)
      for (int t : confined[i].front().tokens)
        if (t != Vocab::unk)  // specials are always on the list
          EXPECT_NE(std::find(sources[i].begin(), sources[i].end(), t), sources[i].end()) << t;
  }
}

namespace {

// Runs `yoke translate` with arguments and returns its exit code; standard error in `err`.
int translate_status(std::vector<std::string> args, std::string& err) {
  args.insert(args.begin(), {YOKE_BINARY, "translate", "--model", tiny_translation_model().string(), "--threads", "1"});
  const auto log = work_dir() / "decode_features_err.txt";
  const int rc = run(args, log);
  err = slurp(log);
  return rc;
}

std::vector<std::string> translate_lines(std::vector<std::string> args) {
  args.insert(args.begin(), {YOKE_BINARY, "translate", "--model", tiny_translation_model().string(), "--threads", "1"});
  return lines_of(output_of(args));
}

std::string toy_source() { return (data_dir() / "test.toy.src.txt").string(); }

}  // namespace

TEST(TranslateCli, EnsembleOfAModelWithItselfPrintsTheSame) {
  const auto dir = tiny_translation_model().string();
  EXPECT_EQ(translate_lines({"--input", toy_source(), "--beam", "3", "--model", dir}),
            translate_lines({"--input", toy_source(), "--beam", "3"}));
  std::string err;
  EXPECT_NE(translate_status({"--input", toy_source(), "--model", dir, "--weights", "1"}, err), 0);
  EXPECT_NE(err.find("--weights gives 1 weights for 2 models"), std::string::npos) << err;
}

TEST(TranslateCli, SamplingRepeatsWithItsSeedOnly) {
  auto sample = [&](const char* seed) {
    return translate_lines({"--input", toy_source(), "--sampling", "topk", "--sampling-topk", "20", "--seed", seed});
  };
  const auto first = sample("3");
  EXPECT_EQ(sample("3"), first);
  EXPECT_NE(sample("4"), first);
}

TEST(TranslateCli, PrefixFileMustCoverTheInput) {
  const auto prefixes = work_dir() / "two_prefixes.txt";
  std::ofstream(prefixes) << "a\n\n";
  std::string err;
  EXPECT_NE(translate_status({"--input", toy_source(), "--prefix-file", prefixes.string()}, err), 0);
  EXPECT_NE(err.find(prefixes.string() + " (--prefix-file) has 2 lines; input line 3 has none"), std::string::npos) << err;
}

// A prefix with more subwords than the model has target positions cannot be completed: said, with
// the file and line, instead of an output silently cut at the last position.
TEST(TranslateCli, APrefixLongerThanThePositionsIsWarnedAbout) {
  const auto input = work_dir() / "one_line.txt", prefixes = work_dir() / "long_prefix.txt";
  std::ofstream(input) << "a b c\n";
  std::string words;
  for (int i = 0; i < 1100; ++i) words += "a ";
  std::ofstream(prefixes) << words << "\n";
  std::string err;
  EXPECT_EQ(translate_status({"--input", input.string(), "--prefix-file", prefixes.string(), "--beam", "1"}, err), 0)
      << err;
  EXPECT_NE(err.find(prefixes.string() + ":1: warning: the prefix has "), std::string::npos) << err;
  EXPECT_NE(err.find("target positions: the output is the prefix cut to"), std::string::npos) << err;
}

TEST(TranslateCli, AlignmentsFollowTheText) {
  const auto lines = translate_lines({"--input", toy_source(), "--alignment", "--alignment-unit", "subwords"});
  const auto plain = translate_lines({"--input", toy_source(), "--beam", "5"});
  ASSERT_EQ(lines.size(), plain.size());
  const std::regex links(R"(( ?\d+-\d+)*)");
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto bar = lines[i].rfind(" ||| ");
    ASSERT_NE(bar, std::string::npos) << lines[i];
    EXPECT_EQ(lines[i].substr(0, bar), plain[i]);
    EXPECT_TRUE(std::regex_match(lines[i].substr(bar + 5), links)) << lines[i];
  }
}

// Every line gets the same two phrases (a word of the toy language and a number) and each
// translation holds both, whatever the tiny model would have said.
TEST(TranslateCli, ConstrainedTranslationsHoldTheirPhrases) {
  const auto lines = lines_of(slurp(toy_source()));
  const auto constraints = work_dir() / "constraints.txt";
  {
    std::ofstream out(constraints);
    for (size_t i = 0; i < lines.size(); ++i) out << "drai\t78\n";
  }
  const auto plain = translate_lines({"--input", toy_source(), "--beam", "4"});
  const auto held = translate_lines({"--input", toy_source(), "--beam", "4", "--constraints", constraints.string()});
  ASSERT_EQ(held.size(), lines.size());
  size_t lacking = 0;
  for (size_t i = 0; i < held.size(); ++i) {
    lacking += plain[i].find(" 78") == std::string::npos;
    EXPECT_NE(held[i].find("drai"), std::string::npos) << held[i];
    EXPECT_NE(held[i].find("78"), std::string::npos) << held[i];
  }
  EXPECT_GT(lacking, 0u);  // the constraints changed something
}

// Standard input is translated as it comes: the answer to the first line arrives while the input
// is still open, and the whole output equals that of the same lines read from a file.
TEST(TranslateCli, StreamsStandardInput) {
  const auto source = lines_of(slurp(toy_source()));
  ASSERT_GE(source.size(), 3u);
  const auto expected = translate_lines({"--input", toy_source()});
  int to_child[2], from_child[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(from_child), 0);
  const std::string model = tiny_translation_model().string();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    close(to_child[1]);
    close(from_child[0]);
    FILE* f = std::freopen((work_dir() / "stream_err.txt").c_str(), "w", stderr);
    (void)f;
    execl(YOKE_BINARY, YOKE_BINARY, "translate", "--model", model.c_str(), "--threads", "1", (char*)nullptr);
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  const std::string first = source[0] + "\n";
  ASSERT_EQ(write(to_child[1], first.data(), first.size()), ssize_t(first.size()));
  // The first translation comes back before the input ends (60 s bounds a slow machine).
  std::string got;
  pollfd p{from_child[0], POLLIN, 0};
  while (got.find('\n') == std::string::npos) {
    ASSERT_EQ(poll(&p, 1, 60000), 1) << "no translation within 60 s while the input stays open";
    char buf[4096];
    const ssize_t n = read(from_child[0], buf, sizeof buf);
    ASSERT_GT(n, 0);
    got.append(buf, size_t(n));
  }
  for (size_t i = 1; i < source.size(); ++i) {
    const std::string line = source[i] + "\n";
    ASSERT_EQ(write(to_child[1], line.data(), line.size()), ssize_t(line.size()));
  }
  close(to_child[1]);
  char buf[4096];
  for (ssize_t n; (n = read(from_child[0], buf, sizeof buf)) > 0;) got.append(buf, size_t(n));
  close(from_child[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp(work_dir() / "stream_err.txt");
  EXPECT_EQ(lines_of(got), expected);
}

// Standard input without a line break for more than kMaxLineBytes: the lines before it are
// translated, then an error names the line, instead of memory growing with the stream.
TEST(TranslateCli, AStandardInputLineLongerThanTheLimitIsAnError) {
  const auto input = work_dir() / "long-stdin.txt";
  {
    std::ofstream f(input);
    f << lines_of(slurp(toy_source())).front() << "\n" << std::string(kMaxLineBytes + 1, 'a');
  }
  const auto out = work_dir() / "long-stdin.out", err = work_dir() / "long-stdin.err";
  const std::string cmd = std::string("'") + YOKE_BINARY + "' translate --model '" + tiny_translation_model().string() +
                          "' --threads 1 < '" + input.string() + "' > '" + out.string() + "' 2> '" + err.string() + "'";
  const int status = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << slurp(err);
  EXPECT_NE(slurp(err).find("standard input line 2: longer than 1 MiB"), std::string::npos) << slurp(err);
  EXPECT_EQ(lines_of(slurp(out)).size(), 1u);  // the first line's translation
}
