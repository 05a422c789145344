#include "report/registration.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "report/signed_number.h"
#include "util/trim.h"

namespace yoke {

namespace {

double number_of(const std::string& text, const std::string& what) {
  std::istringstream in(text);
  double v = 0;
  if (!(in >> v) || !(in >> std::ws).eof() || !std::isfinite(v))
    throw std::invalid_argument(what + " '" + text + "' is not a number");
  return v;
}

ClaimKind kind_of(const std::string& name) {
  if (name == "better") return ClaimKind::better;
  if (name == "worse") return ClaimKind::worse;
  if (name == "not worse") return ClaimKind::not_worse;
  if (name == "equivalent") return ClaimKind::equivalent;
  throw std::invalid_argument("the claim '" + name + "' is not one of: better, worse, not worse, equivalent");
}

}  // namespace

std::string claim_kind_name(ClaimKind k) {
  switch (k) {
    case ClaimKind::better: return "better";
    case ClaimKind::worse: return "worse";
    case ClaimKind::not_worse: return "not worse";
    case ClaimKind::equivalent: return "equivalent";
  }
  return "?";
}

RegisteredComparison parse_registered_comparison(const std::string& value, bool lower_is_better) {
  const auto colon = value.find(':');
  const auto minus = value.find(" - ");
  if (colon == std::string::npos || minus == std::string::npos || minus > colon)
    throw std::invalid_argument("a comparison reads 'B - A: CLAIM[, seed EFFECT][, margin M]' (the spaces around '-' "
                                "separate names that may hold one), got '" + value + "'");
  RegisteredComparison c;
  c.b = trim(value.substr(0, minus));
  c.a = trim(value.substr(minus + 3, colon - minus - 3));
  if (c.a.empty() || c.b.empty() || c.a == c.b)
    throw std::invalid_argument("a comparison needs two different variants, got '" + value + "'");
  std::vector<std::string> items;
  std::istringstream in(value.substr(colon + 1));
  for (std::string item; std::getline(in, item, ',');) items.push_back(trim(item));
  if (items.empty() || items.front().empty()) throw std::invalid_argument("no claim after ':' in '" + value + "'");
  c.kind = kind_of(items.front());
  bool has_margin = false;
  for (size_t i = 1; i < items.size(); ++i) {
    const auto space = items[i].find(' ');
    const std::string key = items[i].substr(0, space), rest = space == std::string::npos ? "" : trim(items[i].substr(space));
    if (key == "seed") c.seed_effect = number_of(rest, "seed");
    else if (key == "margin") {
      c.margin = number_of(rest, "margin");
      has_margin = true;
    } else
      throw std::invalid_argument("'" + items[i] + "' is neither 'seed EFFECT' nor 'margin M'");
  }
  const bool directional = c.kind == ClaimKind::better || c.kind == ClaimKind::worse;
  if (!has_margin) throw std::invalid_argument("'" + value + "' declares no margin: every registered claim needs one");
  if (c.margin < 0) throw std::invalid_argument("a margin is a size: it cannot be negative ('" + value + "')");
  if (directional) {
    if (!c.seed_effect)
      throw std::invalid_argument("a claim of direction needs the seed's effect ('seed EFFECT') in '" + value + "'");
    // In quality terms: "better" is a positive Δ, or a negative one where lower is better.
    const bool seed_better = lower_is_better ? *c.seed_effect < 0 : *c.seed_effect > 0;
    if (*c.seed_effect == 0 || seed_better != (c.kind == ClaimKind::better))
      throw std::invalid_argument("the seed's effect " + signed_number(*c.seed_effect) + " does not say '" +
                                  claim_kind_name(c.kind) + "' on this metric ('" + value + "')");
    if (c.margin > std::fabs(*c.seed_effect))
      throw std::invalid_argument("the margin " + signed_number(c.margin).substr(1) +
                                  " exceeds the seed's own effect: an interval inside it could still hold the seed's "
                                  "number, so it could not contradict the claim ('" + value + "')");
  } else if (c.margin == 0) {
    throw std::invalid_argument("'" + claim_kind_name(c.kind) + "' needs a margin above 0 ('" + value + "')");
  }
  return c;
}

nlohmann::json comparison_json(const RegisteredComparison& c) {
  return {{"a", c.a}, {"b", c.b}, {"claim", claim_kind_name(c.kind)}, {"margin", c.margin},
          {"seed", c.seed_effect ? nlohmann::json(*c.seed_effect) : nlohmann::json(nullptr)}};
}

RegisteredComparison comparison_from_json(const nlohmann::json& c) {
  try {
    RegisteredComparison rc;
    rc.a = c.at("a").get<std::string>();
    rc.b = c.at("b").get<std::string>();
    rc.kind = kind_of(c.at("claim").get<std::string>());
    rc.margin = c.at("margin").get<double>();
    if (c.at("seed").is_number()) rc.seed_effect = c.at("seed").get<double>();
    return rc;
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("registered comparison: ") + e.what());
  }
}

nlohmann::json registration_json(const Registration& r) {
  nlohmann::json comparisons = nlohmann::json::array();
  for (const auto& c : r.comparisons) comparisons.push_back(comparison_json(c));
  return {{"question", r.question},       {"metric", r.metric},       {"test", r.test},
          {"pairing", r.paired ? "paired" : "unpaired"}, {"pairing_why", r.pairing_why},
          {"alpha", r.alpha},             {"comparisons", comparisons}, {"seed_plan", r.seed_plan},
          {"stopping", r.stopping}};
}

Registration registration_from_json(const nlohmann::json& j) {
  try {
    Registration r;
    r.question = j.at("question").get<std::string>();
    r.metric = j.at("metric").get<std::string>();
    r.test = j.at("test").get<std::string>();
    r.paired = j.at("pairing").get<std::string>() == "paired";
    r.pairing_why = j.at("pairing_why").get<std::string>();
    r.alpha = j.at("alpha").get<double>();
    r.seed_plan = j.at("seed_plan").get<std::string>();
    r.stopping = j.at("stopping").get<std::string>();
    for (const auto& c : j.at("comparisons")) r.comparisons.push_back(comparison_from_json(c));
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("registration: ") + e.what());
  }
}

std::optional<std::string> registration_problem(const Registration& r, const std::vector<std::string>& variants,
                                                const std::string& metric) {
  auto known = [&](const std::string& v) { return std::find(variants.begin(), variants.end(), v) != variants.end(); };
  if (r.question.empty()) return "no question: say what the grid decides (question = ...)";
  if (r.test.empty()) return "no test: name the test set that decides (test = NAME)";
  if (r.metric != metric)
    return "metric = " + r.metric + ", but the runs report " + metric + " (bleu for translation, ppl for language models)";
  if (r.pairing_why.empty()) return "no pairing_why: say why the comparisons are " + std::string(r.paired ? "paired" : "unpaired");
  if (r.seed_plan.empty()) return "no seed_plan: say how many seeds and why (the power analysis)";
  if (r.stopping.empty()) return "no stopping: say when a run stops and when the verdict is read";
  if (!(r.alpha > 0 && r.alpha < 1)) return "alpha must lie between 0 and 1";
  if (r.comparisons.empty()) return "no comparison: add compare = B - A: CLAIM, ...";
  for (size_t i = 0; i < r.comparisons.size(); ++i) {
    const auto& c = r.comparisons[i];
    for (const auto* v : {&c.a, &c.b})
      if (!known(*v)) return "compare = " + c.name() + " names '" + *v + "', which is not one of the variants";
    for (size_t j = 0; j < i; ++j)
      if ((r.comparisons[j].a == c.a && r.comparisons[j].b == c.b) || (r.comparisons[j].a == c.b && r.comparisons[j].b == c.a))
        return "the comparison of " + c.a + " and " + c.b + " is registered twice";
  }
  return std::nullopt;
}

}  // namespace yoke
