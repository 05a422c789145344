#include "analysis/model_analysis.h"

#include <cmath>

namespace yoke {
namespace {

// NaN is null: in memory as in the text, which writes a NaN number as null anyway.
nlohmann::json num(double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); }

nlohmann::json sphere_json(const SphereStats& s) {
  return {{"rows", s.rows},
          {"zero_rows", s.zero_rows},
          {"dim", s.dim},
          {"mean_resultant_length", {{"value", num(s.mean_resultant_length)},
                                     {"uniform_expected", num(s.mean_resultant_length_uniform)}}},
          {"pair_cosine", {{"pairs", s.pairs},
                           {"all_pairs", s.all_pairs},
                           {"mean", num(s.cosine_mean)},
                           {"std", num(s.cosine_std)},
                           {"uniform_expected_mean", num(s.cosine_mean_uniform)},
                           {"uniform_expected_std", num(s.cosine_std_uniform)}}},
          {"top_pc_share", {{"value", num(s.top_pc_share)}, {"uniform_expected", num(s.top_pc_share_uniform)}}},
          {"participation_ratio", {{"value", num(s.participation_ratio)},
                                   {"uniform_expected", num(s.participation_ratio_uniform)}}}};
}

nlohmann::json against_json(const AgainstModel& a) {
  const Resemblance& r = a.resemblance;
  return {{"model", a.model},
          {"checkpoint", a.checkpoint},
          {"tie", a.tie},
          {"spearman_input", num(r.spearman_input)},
          {"spearman_output", num(r.spearman_output)},
          {"spearman_input_output", num(r.spearman_input_output)},
          {"knn10_input", num(r.knn_input)},
          {"knn10_output", num(r.knn_output)},
          {"knn10_input_output", num(r.knn_input_output)},
          {"knn10_chance", num(r.knn_chance)},
          {"cka_input", num(r.cka_input)},
          {"cka_output", num(r.cka_output)},
          {"cka_input_output", num(r.cka_input_output)},
          {"row_cosine_input", num(r.row_cosine_input)},
          {"row_cosine_output", num(r.row_cosine_output)},
          {"pairs", r.pairs},
          {"words", r.words},
          {"knn_words", r.knn_words},
          {"k", r.k},
          {"input", "the untied model's target embedding E"},
          {"output", "the untied model's output matrix U"},
          {"input_output", "E against U within the untied model"},
          {"row_cosine", "mean cos(W_i, E_i), cos(W_i, U_i) as stored: not rotation invariant, "
                         "near 0 unless the two models started from the same matrix (same seed)"}};
}

}  // namespace

nlohmann::json to_json(const ModelAnalysis& a) {
  nlohmann::json j;
  j["estimator"] = a.estimator;
  j["tie"] = a.tie;
  j["identity"] = num(a.identity);
  j["normality_max_logit"] = num(a.normality_max_logit);
  j["tying_gap"] = a.tying_gap ? nlohmann::json(*a.tying_gap) : nlohmann::json(nullptr);
  if (const auto& p = a.norm_vs_prediction)
    j["norm_vs_prediction"] = {{"words", p->words},
                               {"spearman_overprediction", num(p->spearman_overprediction)},
                               {"spearman_reference_frequency", num(p->spearman_reference_frequency)},
                               {"spearman_hypothesis_frequency", num(p->spearman_hypothesis_frequency)},
                               {"matrix", "output rows as stored (before an estimator's normalisation)"}};
  j["norms"] = nlohmann::json::object();
  for (const auto& [name, s] : a.norms) j["norms"][name] = {{"mean", num(s.mean)}, {"std", num(s.std)}, {"min", num(s.min)}, {"max", num(s.max)}};
  j["sphere"] = nlohmann::json::object();
  for (const auto& [name, s] : a.sphere) j["sphere"][name] = sphere_json(s);
  if (a.against) j["against"] = against_json(*a.against);
  j["pictures"] = a.pictures;
  return j;
}

}  // namespace yoke
