// analysis/matrix_resemblance.h (seed 004 §4.5: does a tied matrix resemble an output embedding
// more than an input one?): a noisy copy of U against an unrelated E, rotation invariance, CKA by
// hand, and the refusals.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "analysis/matrix_resemblance.h"
#include "util/error.h"
#include "margin.h"

using namespace yoke;
namespace fs = std::filesystem;

namespace {

// n rows in d dimensions around 20 random centres: groups of alike words, so that nearest
// neighbours and the ranking of pair cosines mean something.
at::Tensor clustered_rows(int64_t n, int64_t d, uint64_t seed) {
  at::manual_seed(seed);
  auto centres = at::randn({20, d}, at::kDouble) * 2.0;
  auto which = at::randint(20, {n}, at::kLong);
  return centres.index_select(0, which) + at::randn({n, d}, at::kDouble);
}

constexpr int64_t kN = 600, kD = 32;

}  // namespace

// W = U + noise (half the within-group spread) against an E drawn independently: every statistic
// puts W nearer U, by a wide margin (seen: ρ 0.95 against 0.001; kNN overlap 0.72 against 0.014,
// chance being 10/599 = 0.017; CKA 0.97 against the 0.03 of two unrelated clustered matrices).
// Swapping the roles of E and U swaps every comparison, so a statistic computed on the wrong
// matrix fails.
TEST(MatrixResemblance, NoisyCopyOfTheOutputResemblesItMoreThanAnUnrelatedInput) {
  const auto u = clustered_rows(kN, kD, 31), e = clustered_rows(kN, kD, 32);
  at::manual_seed(33);
  const auto w = u + 0.5 * at::randn({kN, kD}, at::kDouble);
  ResemblanceOptions o;
  o.knn_words = 300;
  const Resemblance r = matrix_resemblance(w, e, u, o);
  EXPECT_EQ(r.words, kN);
  EXPECT_EQ(r.pairs, kN * (kN - 1) / 2);  // 179700 ≤ 200000: every pair
  EXPECT_EQ(r.knn_words, 300);
  EXPECT_EQ(r.k, 10);
  YOKE_EXPECT_NEAR(r.knn_chance, 10.0 / 599.0, 1e-12);
  EXPECT_GT(r.spearman_output, 0.8);
  EXPECT_LT(std::fabs(r.spearman_input), 0.1);
  EXPECT_GT(r.knn_output, 0.3);
  EXPECT_LT(r.knn_input, 0.05);
  EXPECT_GT(r.cka_output, 0.6);
  EXPECT_LT(r.cka_input, 0.3);
  EXPECT_GT(r.spearman_output - r.spearman_input, 0.7);
  EXPECT_GT(r.knn_output - r.knn_input, 0.25);
  EXPECT_GT(r.cka_output - r.cka_input, 0.3);
  // E and U are unrelated: their own comparison is as low as W's with E.
  EXPECT_LT(std::fabs(r.spearman_input_output), 0.1);
  EXPECT_LT(r.knn_input_output, 0.05);

  // Here W and U share coordinates (W was made from U), so the rows themselves agree too.
  EXPECT_GT(r.row_cosine_output, 0.8);
  EXPECT_LT(std::fabs(r.row_cosine_input), 0.05);

  const Resemblance swapped = matrix_resemblance(w, u, e, o);
  EXPECT_DOUBLE_EQ(swapped.spearman_input, r.spearman_output);
  EXPECT_DOUBLE_EQ(swapped.spearman_output, r.spearman_input);
  EXPECT_DOUBLE_EQ(swapped.knn_input, r.knn_output);
  EXPECT_DOUBLE_EQ(swapped.knn_output, r.knn_input);
  YOKE_EXPECT_NEAR(swapped.cka_input, r.cka_output, 1e-12);
  YOKE_EXPECT_NEAR(swapped.cka_output, r.cka_input, 1e-12);
}

// W = 2.5·E·M with M a d × (d + 8) matrix of orthonormal rows (a rotation into a wider space, and
// a rescaling): every cosine of W equals E's, so ρ = 1 and every neighbour list is the same, and
// linear CKA is 1 (‖MᵀXᵀX‖ = ‖XᵀX‖ when MMᵀ = I). The two models of `--against` are trained apart,
// so only statistics with this invariance can compare them; cos(W_i, E_i) here is arbitrary.
TEST(MatrixResemblance, RotationAndScaleOfTheInputGiveOne) {
  const auto e = clustered_rows(kN, kD, 41), u = clustered_rows(kN, kD, 42);
  at::manual_seed(43);
  const auto q = std::get<0>(at::linalg_qr(at::randn({kD + 8, kD}, at::kDouble)));  // orthonormal columns
  const auto w = 2.5 * at::matmul(e, q.t());
  ASSERT_EQ(w.size(1), kD + 8);
  const Resemblance r = matrix_resemblance(w, e, u);
  // Cosines agree to rounding (~1e-15); the closest two of 179700 cosines differ by ~1e-10, so
  // no rank changes.
  YOKE_EXPECT_NEAR(r.spearman_input, 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.knn_input, 1.0);
  YOKE_EXPECT_NEAR(r.cka_input, 1.0, 1e-9);
  EXPECT_LT(r.cka_output, 0.5);
  EXPECT_EQ(r.knn_words, 600);  // fewer words than --knn-words: all of them
  EXPECT_TRUE(std::isnan(r.row_cosine_input));  // other widths: rows cannot be compared as stored
}

// CKA worked by hand: a column permutation and a scale give 1; columns with disjoint support
// after centring give 0 (YᵀX = 0); a constant matrix has no spread.
TEST(MatrixResemblance, LinearCkaOfHandWorkedCases) {
  auto x = at::tensor({1.0, 0.0, -1.0, 0.0, 0.0, 2.0, 0.0, -2.0}, at::kDouble).reshape({4, 2});
  YOKE_EXPECT_NEAR(linear_cka(x, 3.0 * x.flip({1})), 1.0, 1e-12);
  auto a = at::tensor({1.0, -1.0, 0.0, 0.0}, at::kDouble).reshape({4, 1});
  auto b = at::tensor({0.0, 0.0, 1.0, -1.0}, at::kDouble).reshape({4, 1});
  YOKE_EXPECT_NEAR(linear_cka(a, b), 0.0, 1e-12);
  EXPECT_TRUE(std::isnan(linear_cka(at::ones({4, 2}, at::kDouble), x)));
}

namespace {

fs::path vocab_dir() {
  static fs::path dir = [] {
    auto d = fs::temp_directory_path() / ("yoke_resemblance_" + std::to_string(::getpid()));
    fs::remove_all(d);
    for (const char* sub : {"a", "b", "c", "d"}) fs::create_directories(d / sub);
    auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
    write(d / "a" / "spm.model", "vocabulary one");
    write(d / "a" / "spm.vocab", "piece list one");
    write(d / "b" / "spm.model", "vocabulary one");  // the same files at another path
    write(d / "b" / "spm.vocab", "piece list one");
    write(d / "c" / "spm.model", "vocabulary two");  // same length, other bytes
    write(d / "d" / "spm.model", "vocabulary one");
    write(d / "d" / "spm.vocab", "piece list two");
    return d;
  }();
  return dir;
}

ComparedModel side(const std::string& sub, bool tied, Task task = Task::lm, int64_t vocab = 8000) {
  ComparedModel m;
  m.path = "models/" + sub + (tied ? "-tied" : "-untied");
  m.task = task;
  m.tie = tied ? "all" : "none";
  m.target_is_output = tied;
  m.target_vocab = vocab;
  m.vocab_file = (vocab_dir() / sub / "spm.model").string();
  return m;
}

// The message of the InputError check_resemblance_pair throws ("" when it accepts the pair).
std::string refusal(const ComparedModel& tied, const ComparedModel& untied) {
  try {
    check_resemblance_pair(tied, untied);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(MatrixResemblance, RefusesPairsThatCannotBeCompared) {
  EXPECT_EQ(refusal(side("a", true), side("b", false)), "");
  EXPECT_EQ(refusal(side("a", true, Task::translate), side("b", false, Task::translate)), "");

  const std::string not_tied = refusal(side("a", false), side("b", false));
  EXPECT_NE(not_tied.find("--model models/a-untied has tie none"), std::string::npos) << not_tied;
  const std::string not_untied = refusal(side("a", true), side("b", true));
  EXPECT_NE(not_untied.find("--against models/b-tied has tie all"), std::string::npos) << not_untied;
  const std::string tasks = refusal(side("a", true, Task::lm), side("b", false, Task::translate));
  EXPECT_NE(tasks.find("language model but --against"), std::string::npos) << tasks;
  const std::string sizes = refusal(side("a", true, Task::lm, 8000), side("b", false, Task::lm, 7999));
  EXPECT_NE(sizes.find("differ in size"), std::string::npos) << sizes;
  EXPECT_NE(sizes.find("8000"), std::string::npos) << sizes;
  const std::string model_file = refusal(side("a", true), side("c", false));
  EXPECT_NE(model_file.find("SentencePiece vocabularies differ"), std::string::npos) << model_file;
  EXPECT_NE(model_file.find((vocab_dir() / "c" / "spm.model").string()), std::string::npos) << model_file;
  const std::string vocab_file = refusal(side("a", true), side("d", false));
  EXPECT_NE(vocab_file.find((vocab_dir() / "d" / "spm.vocab").string()), std::string::npos) << vocab_file;
}
