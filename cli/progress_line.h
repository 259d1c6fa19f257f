// ProgressLine: a one-line progress report on stderr that suits where
// stderr goes. On a terminal the line is redrawn in place (\r) as often as
// it changes and erased at the end; into a file or a pipe (CI logs, `2>`)
// each report is a line of its own, at most one every `every_seconds`, and
// nothing is erased — no carriage returns, no padding.
#ifndef DUALSWARM_CLI_PROGRESS_LINE_H_
#define DUALSWARM_CLI_PROGRESS_LINE_H_

#include <chrono>
#include <cstdio>
#include <string>

namespace dualswarm::cli {

class ProgressLine {
 public:
  explicit ProgressLine(std::FILE* out, double every_seconds = 10);
  // Whether `out` is a terminal (redrawn in place).
  bool in_place() const { return in_place_; }
  void Show(const std::string& text);
  // Ends the report: erases the line on a terminal.
  void Clear();

 private:
  std::FILE* out_;
  bool in_place_;
  double every_seconds_;
  size_t drawn_ = 0;  // characters on the terminal's line now
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_;
};

// The shrinking report: "  shrinking: 52 reruns, 31 reproduced, 3
// requests left" (a rerun of a candidate that dropped what the failure
// needs does not reproduce it), and ", flaky" once some candidate both
// reproduced and did not (the failure depends on timing).
std::string ShrinkingLine(int reruns, int reproduced, size_t size, bool flaky);
// After shrinking: "  verifying: 3 of 5 replays, 3 reproduced".
std::string VerifyingLine(int replays, int planned, int reproduced);

}  // namespace dualswarm::cli

#endif  // DUALSWARM_CLI_PROGRESS_LINE_H_
