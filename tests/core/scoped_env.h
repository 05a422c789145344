// An environment variable set for one scope, for the core and the torch tests.
#pragma once
#include <cstdlib>
#include <optional>
#include <string>

namespace yoke::test {

// Sets an environment variable for one scope (value null: removes it); the value before, or its
// absence, comes back after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* v = std::getenv(name)) before_ = v;
    set_ = (value ? ::setenv(name, value, 1) : ::unsetenv(name)) == 0;
  }
  bool set() const { return set_; }
  ~ScopedEnv() {
    if (before_) ::setenv(name_, before_->c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> before_;
  bool set_ = false;
};

}  // namespace yoke::test
