// Seed 004 §4.5's claim, measured: in a tied model the output path carries most of the gradient,
// so "the tied matrix therefore evolves to resemble an output embedding more than an input
// embedding". A tied model's word matrix W is compared with an untied model's input (target)
// embedding E and output matrix U, over the same vocabulary, rows matched by word id.
//
// The two models are trained independently from different random starts, so nothing ties their
// coordinates together (their spaces are related at best by an unknown transform), and
// cos(W_i, E_i) across models is meaningless. Only the structure of each matrix, how its rows sit
// relative to each other, can be compared, with statistics that a rotation of either matrix
// leaves unchanged:
//   spearman  Spearman's ρ between cos(W_i, W_j) and cos(E_i, E_j) over a fixed random sample of
//             word pairs (the same pairs for E and for U): do the two agree on which words are alike?
//   knn       mean |kNN_k(W, i) ∩ kNN_k(E, i)| / k over a random sample of query words, neighbours
//             by cosine among all word rows (the word itself left out); chance is k/(n − 1)
//   cka       linear CKA (Kornblith et al. 2019) of the column-centred rows:
//             ‖YᵀX‖²_F / (‖XᵀX‖_F ‖YᵀY‖_F), invariant to orthogonal transforms and to scale
// and the same three between E and U themselves (how alike the untied model's own two matrices
// are: the scale against which "more like U than like E" is read).
// One statistic that is not rotation invariant, as a diagnostic: the mean of cos(W_i, E_i) and of
// cos(W_i, U_i) as stored. Near 0 for independently initialised models; far from 0 when the two
// models started from the same matrix (the same seed), in which case the structural statistics
// carry that shared start too: compare models of different seeds to see past it.
#pragma once
#include <cstdint>
#include <string>

#include "compat/torch.h"
#include "config/enums.h"

namespace yoke {

struct LoadedModel;

struct ResemblanceOptions {
  int64_t pairs = 200000;    // word pairs for the Spearman correlations (all of them when fewer)
  int64_t knn_words = 1000;  // query words for the neighbour overlap (all words when fewer)
  int64_t k = 10;
  uint64_t seed = 1;         // of the pairs and the query words
};

struct Resemblance {
  int64_t words = 0, pairs = 0, knn_words = 0, k = 0;
  double spearman_input = 0, spearman_output = 0, spearman_input_output = 0;
  double knn_input = 0, knn_output = 0, knn_input_output = 0, knn_chance = 0;
  double cka_input = 0, cka_output = 0, cka_input_output = 0;
  double row_cosine_input = 0, row_cosine_output = 0;  // NaN when the widths differ
};

// `tied`, `input`, `output`: [n, d] word rows (specials already left out) with the same n, any d.
Resemblance matrix_resemblance(const at::Tensor& tied, const at::Tensor& input, const at::Tensor& output,
                               const ResemblanceOptions& options = {});

// Linear CKA of two [n, ·] matrices whose rows are matched; NaN when either has no spread.
double linear_cka(const at::Tensor& x, const at::Tensor& y);

// Mean over `queries` (row indices) of |kNN_k(a, q) ∩ kNN_k(b, q)| / k, neighbours by cosine.
double knn_overlap(const at::Tensor& a, const at::Tensor& b, const at::Tensor& queries, int64_t k);

// What the refusals of `yoke analyze --against` look at, for one model.
struct ComparedModel {
  std::string path;          // as the user named it, for messages
  Task task = Task::translate;
  std::string tie;           // name_of(tie), for messages
  bool target_is_output = false;  // one matrix for the target embedding and the output
  int64_t target_vocab = 0;
  std::string vocab_file;    // the target-side SentencePiece model the vocabulary came from
};
ComparedModel compared_model(const LoadedModel& model, const std::string& path);

// InputError, saying what to give instead, unless `tied` has its target embedding and output
// tied (tie all, decoder, shared-private), `untied` has them apart (tie none, src-tgt), both are
// of the same task, and their target vocabularies are the same size and the same SentencePiece
// files (the .model, and the .vocab beside it where both models have one).
void check_resemblance_pair(const ComparedModel& tied, const ComparedModel& untied);

}  // namespace yoke
