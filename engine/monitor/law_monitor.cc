#include "engine/monitor/law_monitor.h"

#include "absl/strings/str_cat.h"
#include "engine/ir/json.h"

namespace dualswarm::monitor {

std::optional<LawTag> ReadLawTag(const ir::Value& request) {
  const ir::Value* tag = request.Find("law");
  if (tag == nullptr || !tag->is_map()) return std::nullopt;
  const ir::Value* name = tag->Find("name");
  const ir::Value* run = tag->Find("run");
  const ir::Value* args = tag->Find("args");
  if (name == nullptr || !name->is_string() || run == nullptr || !run->is_int() || args == nullptr || !args->is_list())
    return std::nullopt;
  return LawTag{name->as_string(), run->as_int(), args->as_list()};
}

ir::Value MakeLawTag(const std::string& name, int64_t run, std::vector<ir::Value> args) {
  return ir::Value::Map(
      {{"name", ir::Value::String(name)}, {"run", ir::Value::Int(run)}, {"args", ir::Value::List(std::move(args))}});
}

absl::Status LawMonitor::Sent(int64_t label, const ir::Value& request) {
  if (violation_) return absl::OkStatus();
  std::optional<LawTag> tag = ReadLawTag(request);
  if (!tag) return absl::OkStatus();
  const lang::LawDecl* law = nullptr;
  for (const auto& l : spec_->ast.laws)
    if (l.name == tag->name) law = &l;
  if (law == nullptr) return absl::OkStatus();  // another spec's tag: not evidence
  auto it = runs_.find(tag->run);
  if (it == runs_.end()) {
    if (runs_.size() >= kMaxOpenLawRuns)
      return absl::ResourceExhaustedError(
          absl::StrCat("more than ", kMaxOpenLawRuns, " law runs open at once (limit: law runs)"));
    Open open;
    open.run = std::make_unique<LawRun>(law, tag->args);
    open.set_aside = tag->args.size() != law->params.size();
    it = runs_.emplace(tag->run, std::move(open)).first;
  } else if (&it->second.run->law() != law || it->second.run->args() != tag->args) {
    it->second.set_aside = true;  // two runs under one id: neither is evidence
  }
  if (it->second.run->calls() >= kMaxLawCalls) it->second.set_aside = true;
  if (it->second.set_aside) return absl::OkStatus();
  call_of_label_[label] = CallOf{tag->run, it->second.run->calls()};
  ir::Value call = request;
  it->second.run->Sent(std::move(call));
  return absl::OkStatus();
}

absl::Status LawMonitor::Received(int64_t request_label, const ir::Value& response) {
  if (violation_) return absl::OkStatus();
  auto c = call_of_label_.find(request_label);
  if (c == call_of_label_.end()) return absl::OkStatus();
  const CallOf call = c->second;
  call_of_label_.erase(c);
  auto it = runs_.find(call.run);
  if (it == runs_.end() || it->second.set_aside) return absl::OkStatus();
  it->second.run->Answered(call.index, response);
  return Judge(call.run, it->second);
}

absl::Status LawMonitor::Judge(int64_t run_id, Open& open) {
  absl::StatusOr<lang::LawOutcome> out = open.run->Evaluate(interp_);
  if (!out.ok()) return out.status();
  LawCounts& counts = counts_[open.run->law().name];
  switch (out->kind) {
    case lang::LawOutcome::Kind::kPending:
      return absl::OkStatus();
    case lang::LawOutcome::Kind::kPassed:
      ++counts.passed;
      break;
    case lang::LawOutcome::Kind::kAborted:
      ++counts.aborted;
      break;
    case lang::LawOutcome::Kind::kDiverged:
      ++counts.set_aside;
      open.set_aside = true;
      return absl::OkStatus();
    case lang::LawOutcome::Kind::kViolated: {
      ++counts.violated;
      LawViolation v;
      v.law = &open.run->law();
      v.run = run_id;
      v.why = out->message;
      for (size_t i = 0; i < v.law->params.size() && i < open.run->args().size(); ++i)
        absl::StrAppend(&v.args, i ? ", " : "", v.law->params[i], " = ", ir::ToJson(open.run->args()[i]));
      v.calls = open.run->Describe();
      violation_ = std::move(v);
      break;
    }
  }
  runs_.erase(run_id);
  return absl::OkStatus();
}

}  // namespace dualswarm::monitor
