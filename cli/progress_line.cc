#include "cli/progress_line.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace dualswarm::cli {

ProgressLine::ProgressLine(std::FILE* out, double every_seconds)
    : out_(out), in_place_(isatty(fileno(out)) == 1), every_seconds_(every_seconds) {}

void ProgressLine::Show(const std::string& text) {
  const auto now = std::chrono::steady_clock::now();
  if (in_place_) {
    // Pad over what is left of a longer previous line.
    const size_t pad = drawn_ > text.size() ? drawn_ - text.size() : 0;
    std::fprintf(out_, "\r%s%*s", text.c_str(), static_cast<int>(pad), "");
    drawn_ = text.size() + pad;
  } else {
    if (shown_ && std::chrono::duration<double>(now - last_).count() < every_seconds_) return;
    std::fprintf(out_, "%s\n", text.c_str());
  }
  std::fflush(out_);
  shown_ = true;
  last_ = now;
}

void ProgressLine::Clear() {
  if (!in_place_ || drawn_ == 0) return;
  std::fprintf(out_, "\r%*s\r", static_cast<int>(drawn_), "");
  std::fflush(out_);
  drawn_ = 0;
}

std::string ShrinkingLine(int reruns, int reproduced, size_t size, bool flaky) {
  return absl::StrCat("  shrinking: ", reruns, " reruns, ", reproduced, " reproduced, ", size,
                      size == 1 ? " request" : " requests", " left", flaky ? ", flaky" : "");
}

std::string VerifyingLine(int replays, int planned, int reproduced) {
  return absl::StrCat("  verifying: ", replays, " of ", planned, " replays, ", reproduced, " reproduced");
}

}  // namespace dualswarm::cli
