// What changed between the config a checkpoint was trained with and this run's, for a resume or
// a run that starts from another model (init_from).
// Keys that define the model (its shapes, what its layers compute, its vocabularies) or what the
// recorded best validation means cannot change within a run: the weights would silently mean
// something else. The others (limits, schedule, validation, logging, threads, device, paths) may.
#pragma once
#include <string>
#include <vector>

#include "config/config.h"

namespace yoke {

struct ConfigChange {
  std::string key, before, after;  // values as a config file writes them
  bool allowed = false;            // may change when a run resumes
};

// Every key whose value differs, in the order of config_keys.h.
std::vector<ConfigChange> config_changes(const Config& before, const Config& after);

// Whether `key` defines the model (shapes, layers' maths, vocabularies): a run that starts from
// another model's weights (init_from) must have the same value.
bool defines_model(const std::string& key);

// Whether `key` may change when a run resumes (false for an unknown key).
bool may_change_on_resume(const std::string& key);

// "heads 2 → 4, output dot → cosine".
std::string describe_changes(const std::vector<ConfigChange>& changes);

}  // namespace yoke
