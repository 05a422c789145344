// Lines of standard input as they come, for `yoke translate`'s streaming: a thread reads them into
// a queue; next_chunk hands over what has arrived, so a pipe or a person typing gets answers at once.
#pragma once
#include <condition_variable>
#include <deque>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "text/corpus.h"
#include "util/error.h"

namespace yoke::cli {

// A thread reads standard input into a queue of at most `capacity` lines; next_chunk hands over
// what has arrived: at least one line, waiting for it, unless the input has ended.
class LineStream {
 public:
  explicit LineStream(size_t capacity) : capacity_(capacity), reader_([this] { read(); }) {}
  ~LineStream() {
    // The reader ends at the end of input; when the command stops early it may be blocked in a read.
    if (ended()) reader_.join();
    else reader_.detach();
  }
  // Up to `capacity` lines; empty once the input has ended and every line was handed over.
  std::vector<std::string> next_chunk() {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return !lines_.empty() || ended_; });
    if (lines_.empty() && !error_.empty()) throw InputError(error_);  // after every line before it
    std::vector<std::string> out(std::make_move_iterator(lines_.begin()), std::make_move_iterator(lines_.end()));
    lines_.clear();
    changed_.notify_all();
    return out;
  }

 private:
  bool ended() {
    std::lock_guard<std::mutex> lock(mu_);
    return ended_;
  }
  // One line at a time as it arrives, each at most kMaxLineBytes (text/corpus.h): a stream without
  // line breaks ends with an error instead of filling memory.
  bool next_line(std::string& line, size_t line_no) {
    line.clear();
    std::streambuf* in = std::cin.rdbuf();
    for (;;) {
      const int c = in->sbumpc();
      if (c == std::char_traits<char>::eof()) return !line.empty();
      if (c == '\n') return true;
      line.push_back(char(c));
      if (line.size() > kMaxLineBytes) {
        error_ = "standard input line " + std::to_string(line_no) + ": longer than " +
                 std::to_string(kMaxLineBytes >> 20) + " MiB (a stream without line breaks?): one sentence per line";
        return false;
      }
    }
  }
  void read() {
    size_t line_no = 0;
    for (std::string line; next_line(line, ++line_no);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      std::unique_lock<std::mutex> lock(mu_);
      changed_.wait(lock, [&] { return lines_.size() < capacity_; });
      lines_.push_back(std::move(line));
      changed_.notify_all();
    }
    std::lock_guard<std::mutex> lock(mu_);
    ended_ = true;
    changed_.notify_all();
  }
  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::string> lines_;
  bool ended_ = false;
  std::string error_;  // why reading stopped early, raised once the lines before it are taken
  std::thread reader_;
};

}  // namespace yoke::cli
