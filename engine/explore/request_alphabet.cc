#include "engine/explore/request_alphabet.h"

#include <algorithm>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/ir/json.h"

namespace dualswarm::explore {
namespace {

// A GenContext that answers every choice from a script and extends it with
// 0 past its end, recording each choice's arity, so that successive runs
// visit every sequence of choices (depth-first over the choice tree).
class EnumeratingGen : public lang::GenContext {
 public:
  explicit EnumeratingGen(const AlphabetOptions& o) : o_(o) {}

  void Restart() { pos_ = 0; }
  // The next sequence of choices; false when every one was run.
  bool Next() {
    script_.resize(pos_);
    arity_.resize(pos_);
    while (!script_.empty() && script_.back() + 1 >= arity_.back()) {
      script_.pop_back();
      arity_.pop_back();
    }
    if (script_.empty()) return false;
    ++script_.back();
    return true;
  }

  int ChooseAlternative(int, const std::vector<int64_t>& weights, const std::vector<bool>& excluded) override {
    // Enumerates the alternatives in order; an excluded one (it made
    // nothing on an earlier try) is skipped by the interpreter's retry,
    // which asks again: the next enabled one from the scripted index.
    std::vector<int> enabled;
    for (size_t i = 0; i < weights.size(); ++i)
      if (!excluded[i] && weights[i] > 0) enabled.push_back(static_cast<int>(i));
    if (enabled.empty()) return -1;
    return enabled[static_cast<size_t>(Pick(static_cast<int>(enabled.size())))];
  }
  int64_t RandomInt(int64_t lo, int64_t hi) override {
    // hi >= lo (the interpreter checks); the span may exceed int64.
    const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    const int n = span >= static_cast<uint64_t>(o_.int_choices) ? o_.int_choices : static_cast<int>(span) + 1;
    return lo + Pick(std::max(n, 1));
  }
  std::string RandomWord(int64_t) override { return Word(); }
  std::string RandomEtag() override { return absl::StrCat("\"", Word(), "\""); }
  std::optional<ir::Value> Observed(const std::string&) override { return std::nullopt; }

 private:
  std::string Word() {
    return o_.words.empty() ? "a" : o_.words[static_cast<size_t>(Pick(static_cast<int>(o_.words.size())))];
  }
  int Pick(int n) {
    if (pos_ < script_.size()) return std::min(script_[pos_++], n - 1);
    script_.push_back(0);
    arity_.push_back(n);
    ++pos_;
    return 0;
  }

  const AlphabetOptions& o_;
  std::vector<int> script_, arity_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<std::vector<ir::Value>> EnumerateRequests(const lang::Interpreter& interp, const std::string& gen,
                                                         const std::vector<ir::Value>& globals,
                                                         const AlphabetOptions& options, bool* cut) {
  EnumeratingGen ctx(options);
  std::vector<ir::Value> out;
  std::set<std::string> seen;
  size_t runs = 0;
  do {
    ctx.Restart();
    absl::StatusOr<ir::Value> r = interp.RunGen(gen, globals, &ctx);
    if (!r.ok()) {
      // Every alternative made nothing on this sequence (e.g. pick() from an
      // empty map's keys in the initial state): no request, not an error.
      if (absl::StrContains(r.status().message(), "produced nothing")) continue;
      return r.status();
    }
    if (seen.insert(ir::ToJson(*r)).second) out.push_back(*std::move(r));
  } while (out.size() < options.max_requests && ++runs < options.max_runs && ctx.Next());
  // Stopped by a bound: unless the choices happened to be all run, some
  // requests may be missing.
  if (cut != nullptr) *cut = (out.size() >= options.max_requests || runs >= options.max_runs) && ctx.Next();
  return out;
}

}  // namespace dualswarm::explore
