#include "engine/monitor/law_run.h"

#include "absl/strings/str_cat.h"
#include "engine/ir/json.h"

namespace dualswarm::monitor {
namespace {

// Answers a run's op calls from what the trace holds, in order.
class RecordedCalls : public lang::OpCalls {
 public:
  RecordedCalls(const lang::Spec* spec, const std::vector<ir::Value>& requests,
                const std::vector<std::optional<ir::Value>>& responses)
      : spec_(spec), requests_(requests), responses_(responses) {}

  lang::OpAnswer Call(const lang::OpDecl& op, const std::vector<ir::Value>& args) override {
    lang::OpAnswer a;
    const size_t k = next_++;
    if (k >= requests_.size()) {
      if (k < kMaxLawCalls) needed_ = LawCall{op.name, args};
      a.kind = k < kMaxLawCalls ? lang::OpAnswer::Kind::kPending : lang::OpAnswer::Kind::kDiverged;
      return a;
    }
    const ir::Value* name = requests_[k].Find("call");
    const ir::Value* sent_args = requests_[k].Find("args");
    if (name == nullptr || !name->is_string() || name->as_string() != op.name || sent_args == nullptr ||
        !sent_args->is_list() || sent_args->as_list() != args) {
      a.kind = lang::OpAnswer::Kind::kDiverged;
      return a;
    }
    if (!responses_[k]) return a;  // kPending: sent, not answered
    if (const ir::Value* ret = responses_[k]->Find("ret")) {
      const bool fits = op.result.empty() || lang::OfSignatureType(*spec_, op.result, *ret);
      a.kind = fits ? lang::OpAnswer::Kind::kReturned : lang::OpAnswer::Kind::kIllTyped;
      a.value = *ret;
    } else if (const ir::Value* exn = responses_[k]->Find("exn")) {
      a.kind = lang::OpAnswer::Kind::kRaised;
      a.value = *exn;
    } else {
      // The library side refused the call ({"error": ...}: a handle it
      // does not know after a rerun dropped its maker): no judgement.
      a.kind = lang::OpAnswer::Kind::kDiverged;
    }
    return a;
  }
  std::optional<LawCall> needed_;

 private:
  const lang::Spec* spec_;
  const std::vector<ir::Value>& requests_;
  const std::vector<std::optional<ir::Value>>& responses_;
  size_t next_ = 0;
};

}  // namespace

absl::StatusOr<lang::LawOutcome> LawRun::Evaluate(const lang::Interpreter& interp) {
  RecordedCalls calls(spec_, requests_, responses_);
  absl::StatusOr<lang::LawOutcome> out = interp.EvalLaw(*law_, args_, &calls);
  needed_ = std::move(calls.needed_);
  return out;
}

std::string LawRun::Describe() const {
  std::string out;
  for (size_t k = 0; k < requests_.size(); ++k) {
    const ir::Value* name = requests_[k].Find("call");
    const ir::Value* args = requests_[k].Find("args");
    absl::StrAppend(&out, k ? "; " : "", name != nullptr && name->is_string() ? name->as_string() : "?", "(");
    if (args != nullptr && args->is_list())
      for (size_t i = 0; i < args->as_list().size(); ++i)
        absl::StrAppend(&out, i ? ", " : "", ir::ToJson(args->as_list()[i]));
    absl::StrAppend(&out, ") -> ", responses_[k] ? ir::ToJson(*responses_[k]) : "(no answer)");
  }
  return out;
}

ir::Value LawCallRequest(const LawCall& call) {
  return ir::Value::Map({{"call", ir::Value::String(call.op)}, {"args", ir::Value::List(call.args)}});
}

}  // namespace dualswarm::monitor
