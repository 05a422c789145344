// The translation service (decode/translation_service.h): what every front door gets from it.
#include <gtest/gtest.h>

#include <cmath>

#include "cli_helpers.h"
#include "decode/translation_service.h"
#include "decode/batched_decoding.h"
#include "store/model_store.h"
#include "text/corpus.h"

using namespace yoke;
using namespace yoke::test;

namespace {

struct Fixture {
  LoadedModel m = load_model(tiny_translation_model().string());
  std::vector<std::string> lines = read_lines((work_dir() / "corpus" / "test.src").string());
  TranslationService service{*m.model, m.src_vocab, m.tgt_vocab};
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

}  // namespace

// decode/batched_decoding.h's default batches: beam search on the CPU takes kCpuBeamBatchTokens,
// greedy and sampling kCpuBatchTokens; a service given 0 cuts each request's batches by its search.
TEST(TranslationService, BeamSearchTakesLargerDefaultBatchesOnTheCpu) {
  auto& f = fixture();
  SearchOptions so;
  so.beam = 1;
  EXPECT_EQ(default_batch_tokens(*f.m.model, so), kCpuBatchTokens);
  so.beam = 4;
  EXPECT_EQ(default_batch_tokens(*f.m.model, so), kCpuBeamBatchTokens);
  so.sampling = Sampling::topk;  // one row per sentence, as greedy
  EXPECT_EQ(default_batch_tokens(*f.m.model, so), kCpuBatchTokens);

  TranslationRequest request;
  for (int copy = 0; copy < 40; ++copy) request.lines.insert(request.lines.end(), f.lines.begin(), f.lines.end());
  request.search.beam = 4;
  request.search.max_len_b = 2;  // the batches are what is counted, not the translations
  const auto sources = f.service.encode(request).sources;
  auto batches = [&](int tokens) {
    size_t n = 0;
    translate_ids(*f.m.model, sources, request.search, tokens, [&](size_t) { ++n; });
    return n;
  };
  const size_t beam_batches = batches(kCpuBeamBatchTokens);
  ASSERT_LT(beam_batches, batches(kCpuBatchTokens)) << "too few lines to tell the two sizes apart";
  EXPECT_EQ(batches(0), beam_batches);
  size_t served = 0;
  f.service.translate(request, {[&](size_t) { ++served; }, {}});
  EXPECT_EQ(served, beam_batches);
}

// The plain route (one hypothesis, nothing else asked for) gives translate_ids's translations in
// input order, handed over in order, with their scores left uncomputed.
TEST(TranslationService, ThePlainSearchComesBackInInputOrder) {
  auto& f = fixture();
  TranslationRequest request;
  request.lines = f.lines;
  request.search.beam = 3;
  request.first_index = 100;
  std::vector<size_t> handed;
  size_t last_done = 0;
  TranslationTimings timings;
  const auto out = f.service.translate(
      request, {[&](size_t done) { last_done = done; }, [&](const Translation& t) { handed.push_back(t.index); }},
      &timings);
  ASSERT_EQ(out.size(), f.lines.size());
  EXPECT_EQ(last_done, f.lines.size());
  EXPECT_EQ(timings.sentences, f.lines.size());
  EXPECT_GT(timings.search_seconds, 0.0);
  EXPECT_GE(timings.encode_seconds, 0.0);
  size_t source_subwords = 0, target_subwords = 0;
  const auto ids = translate_ids(*f.m.model, f.service.encode(request).sources, request.search, default_batch_tokens(*f.m.model));
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(handed.at(i), 100 + i);
    EXPECT_EQ(out[i].index, 100 + i);
    ASSERT_EQ(out[i].hypotheses.size(), 1u);
    EXPECT_EQ(out[i].hypotheses[0].tokens, ids[i]);
    EXPECT_EQ(out[i].hypotheses[0].text, f.m.tgt_vocab.decode(ids[i]));
    EXPECT_TRUE(std::isnan(out[i].hypotheses[0].score));
    EXPECT_FALSE(out[i].cut());
    source_subwords += out[i].source.size();
    target_subwords += ids[i].size();
  }
  EXPECT_EQ(timings.source_subwords, source_subwords);
  EXPECT_EQ(timings.target_subwords, target_subwords);
}

// Asking for scores takes the n-best route: the same best translations, now scored, and an n-best
// list sorted best first whose head is the one-best.
TEST(TranslationService, ScoresAndNbestListsAgreeWithThePlainSearch) {
  auto& f = fixture();
  TranslationRequest plain;
  plain.lines = f.lines;
  plain.search.beam = 4;
  TranslationRequest scored = plain, four = plain;
  scored.scores = true;
  four.nbest = 4;
  const auto a = f.service.translate(plain), b = f.service.translate(scored), c = f.service.translate(four);
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(b[i].hypotheses.size(), 1u);
    EXPECT_EQ(b[i].hypotheses[0].tokens, a[i].hypotheses[0].tokens) << "line " << i;
    EXPECT_TRUE(std::isfinite(b[i].hypotheses[0].score));
    ASSERT_FALSE(c[i].hypotheses.empty());
    EXPECT_LE(c[i].hypotheses.size(), 4u);
    EXPECT_EQ(c[i].hypotheses[0].tokens, a[i].hypotheses[0].tokens) << "line " << i;
    EXPECT_EQ(c[i].hypotheses[0].score, b[i].hypotheses[0].score);  // one search, one path: exact
    for (size_t h = 1; h < c[i].hypotheses.size(); ++h)
      EXPECT_GE(c[i].hypotheses[h - 1].score, c[i].hypotheses[h].score);
  }
  four.nbest = 5;
  EXPECT_THROW(f.service.encode(four), InputError);  // more than the beam holds
}

// Lines over the limit are cut and say so (the CLI warns), or refused with the line's index (the
// server's 413); a prefix that fills the target's positions is refused too.
TEST(TranslationService, LongLinesAreCutOrRefusedAsTheRequestSays) {
  auto& f = fixture();
  TranslationRequest request;
  request.lines = {"a", f.lines[0] + " " + f.lines[1]};
  request.search.beam = 2;
  const size_t n = f.m.src_vocab.encode(request.lines[1]).size();
  ASSERT_GT(n, 4u);
  request.max_source_subwords = n - 1;
  const auto out = f.service.translate(request);
  EXPECT_FALSE(out[0].cut());
  EXPECT_TRUE(out[1].cut());
  EXPECT_EQ(out[1].source.size(), n - 1);
  EXPECT_EQ(out[1].source_subwords, n);
  request.long_lines = LongLines::refuse;
  try {
    f.service.encode(request);
    ADD_FAILURE() << "a line over the limit was not refused";
  } catch (const TooLong& e) {
    EXPECT_EQ(e.index, 1u);
    EXPECT_EQ(e.subwords, n);
    EXPECT_EQ(e.limit, n - 1);
    EXPECT_EQ(std::string(e.what()), "text[1] has " + std::to_string(n) + " subwords; at most " + std::to_string(n - 1));
  }
  request.max_source_subwords = n;  // both sources fit; the second prefix fills the positions
  request.prefixes = {"", f.lines[0] + " " + f.lines[1] + " " + f.lines[2]};
  EXPECT_THROW(f.service.encode(request), TooLong);
  request.long_lines = LongLines::cut;
  const auto guided = f.service.translate(request);
  EXPECT_EQ(guided[0].prefix_subwords, 0u);
  EXPECT_GE(guided[1].prefix_subwords, n);
  request.prefixes.pop_back();
  EXPECT_THROW(f.service.encode(request), InputError);  // one prefix per line
}

// A prefix is where the translation starts; encode() then finish() over the caller's own search
// (the server's queue) gives what translate() gives.
TEST(TranslationService, PrefixesLeadAndTheStepsMatchTheWhole) {
  auto& f = fixture();
  TranslationRequest request;
  request.lines = {f.lines[0], f.lines[1], f.lines[2]};
  request.prefixes = {"", f.m.tgt_vocab.decode({f.m.tgt_vocab.encode(f.lines[3]).front()}), ""};
  request.search.beam = 3;
  request.nbest = 2;
  const auto whole = f.service.translate(request);
  const auto prefix = f.m.tgt_vocab.encode(request.prefixes[1]);
  const auto& led = whole[1].hypotheses.front().tokens;
  ASSERT_GE(led.size(), prefix.size());
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), led.begin()));
  const auto enc = f.service.encode(request);
  ASSERT_EQ(enc.guides.size(), 3u);
  EXPECT_FALSE(enc.plain);
  TranslateExtras extras;
  extras.guides = &enc.guides;
  const auto lists = translate_ids_nbest(*f.m.model, enc.sources, enc.search, enc.nbest,
                                         default_batch_tokens(*f.m.model), {}, extras);
  for (size_t i = 0; i < lists.size(); ++i) {
    const Translation t = f.service.finish(enc, i, lists[i]);
    ASSERT_EQ(t.hypotheses.size(), whole[i].hypotheses.size());
    for (size_t h = 0; h < t.hypotheses.size(); ++h) {
      EXPECT_EQ(t.hypotheses[h].text, whole[i].hypotheses[h].text);
      EXPECT_EQ(t.hypotheses[h].score, whole[i].hypotheses[h].score);
    }
  }
}
