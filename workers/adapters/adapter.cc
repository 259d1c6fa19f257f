#include "workers/adapters/adapter.h"

#include "absl/strings/cord.h"

namespace dualswarm::workers {
namespace {

// The payload that marks a target's setup error (its value is unused).
constexpr absl::string_view kTargetSetupPayload = "dualswarm.dev/target-setup-error";

}  // namespace

absl::Status TargetSetupError(absl::string_view message) {
  absl::Status s = absl::FailedPreconditionError(message);
  s.SetPayload(kTargetSetupPayload, absl::Cord("1"));
  return s;
}

bool IsTargetSetupError(const absl::Status& s) { return s.GetPayload(kTargetSetupPayload).has_value(); }

}  // namespace dualswarm::workers
