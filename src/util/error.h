// Errors a user can act on. Every message about an input names the file (and the line when
// there is one), so "where" is never a question.
#pragma once
#include <stdexcept>
#include <string>

namespace yoke {

// A problem with the user's input (files, config, options), as opposed to a bug.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A run that cannot go on for a reason outside yoke and outside the user's files: another process
// of a distributed run died or stopped answering. Reported as an error, not as a bug.
class RunError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "path:line: message" (line 0 means "the file as a whole": "path: message").
inline InputError input_error(const std::string& path, size_t line, const std::string& message) {
  if (line == 0) return InputError(path + ": " + message);
  return InputError(path + ":" + std::to_string(line) + ": " + message);
}

}  // namespace yoke
