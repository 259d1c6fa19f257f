#include "services/coordinator/store/checks.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "services/coordinator/store/limits.h"
#include "util/status_macros.h"

namespace dualswarm::coord {
namespace {

// 1..kMaxIdentifierBytes characters, each alphanumeric or one of `extra`.
bool IsIdentifier(const std::string& s, absl::string_view extra) {
  if (s.empty() || s.size() > kMaxIdentifierBytes) return false;
  for (char c : s)
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && extra.find(c) == absl::string_view::npos) return false;
  return true;
}

}  // namespace

bool IsName(const std::string& s) { return IsIdentifier(s, "_-."); }

absl::Status CheckName(const char* what, const std::string& name) {
  if (IsName(name)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("bad ", what, " name \"", name, "\": use 1-", kMaxIdentifierBytes,
                                                 " characters from [A-Za-z0-9_.-]"));
}

absl::Status CheckList(const char* what, const std::vector<std::string>& items) {
  if (items.size() > kMaxListItems) return absl::InvalidArgumentError(absl::StrCat("too many ", what));
  for (const auto& s : items)
    if (!IsIdentifier(s, "_-.:="))
      return absl::InvalidArgumentError(
          absl::StrCat("bad ", what, " \"", s, "\": use 1-", kMaxIdentifierBytes, " characters from [A-Za-z0-9_.:=-]"));
  return absl::OkStatus();
}

absl::Status ValidateBudget(JobBudget* b) {
  if (b->steps == 0) b->steps = kDefaultSteps;
  if (b->connections == 0) b->connections = kDefaultConnections;
  if (b->max_in_flight == 0) b->max_in_flight = kDefaultMaxInFlight;
  if (b->response_timeout_ms == 0) b->response_timeout_ms = kDefaultResponseTimeoutMs;
  if (b->network.empty()) b->network = "tcp";
  if (b->steps > kMaxSteps) return absl::InvalidArgumentError("budget.steps must be at most 1e9");
  if (b->time_budget_ms < 0 || b->time_budget_ms > kMaxTimeBudgetMs)
    return absl::InvalidArgumentError("budget.time_budget_ms must be between 0 and one week");
  if (b->connections < 1 || b->connections > kMaxConnections)
    return absl::InvalidArgumentError(absl::StrCat("budget.connections must be between 1 and ", kMaxConnections));
  if (b->max_in_flight < 1 || b->max_in_flight > kMaxInFlight)
    return absl::InvalidArgumentError(absl::StrCat("budget.max_in_flight must be between 1 and ", kMaxInFlight));
  if (b->response_timeout_ms < 1 || b->response_timeout_ms > kMaxResponseTimeoutMs)
    return absl::InvalidArgumentError("budget.response_timeout_ms must be between 1 ms and one hour");
  if (b->network != "tcp" && b->network != "sync")
    return absl::InvalidArgumentError(
        absl::StrCat("budget.network must be \"tcp\" or \"sync\", got \"", b->network, "\""));
  if (b->max_frontier > kMaxFrontier) return absl::InvalidArgumentError("budget.max_frontier is too large");
  if (b->guide_candidates < 0 || b->guide_candidates > kMaxGuideCandidates)
    return absl::InvalidArgumentError(
        absl::StrCat("budget.guide_candidates must be between 0 and ", kMaxGuideCandidates));
  if (b->explore_depth < 0 || b->explore_depth > kMaxExploreDepth)
    return absl::InvalidArgumentError(absl::StrCat("budget.explore_depth must be between 0 and ", kMaxExploreDepth));
  if (b->explore_max_states > kMaxExploreMaxStates)
    return absl::InvalidArgumentError(absl::StrCat("budget.explore_max_states must be at most ", kMaxExploreMaxStates));
  if (b->explore_depth > 0) {
    if (b->explore_max_states == 0) b->explore_max_states = kDefaultExploreMaxStates;
    if (b->time_budget_ms == 0) b->time_budget_ms = kDefaultExploreTimeMs;
  }
  return absl::OkStatus();
}

absl::Status ValidateTemplate(RunTemplate* t) {
  if (t->jobs < 1 || t->jobs > kMaxJobsPerRun)
    return absl::InvalidArgumentError(absl::StrCat("jobs must be between 1 and ", kMaxJobsPerRun, ", got ", t->jobs));
  RETURN_IF_ERROR(CheckText("spec_hash", t->spec_hash, true));
  RETURN_IF_ERROR(ValidateBudget(&t->budget));
  if (t->gen.empty()) t->gen = "request";
  if (!IsName(t->gen)) return absl::InvalidArgumentError(absl::StrCat("bad gen name \"", t->gen, "\""));
  return absl::OkStatus();
}

}  // namespace dualswarm::coord
