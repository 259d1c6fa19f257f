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
  if (!tag || set_aside_.contains(tag->run)) return absl::OkStatus();
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
    open.run = std::make_unique<LawRun>(spec_, law, tag->args);
    it = runs_.emplace(tag->run, std::move(open)).first;
    if (tag->args.size() != law->params.size()) return SetAside(tag->run);
  } else if (&it->second.run->law() != law || it->second.run->args() != tag->args) {
    return SetAside(tag->run);  // two runs under one id: neither is evidence
  }
  if (it->second.run->calls() >= kMaxLawCalls) return SetAside(tag->run);
  call_of_label_[label] = CallOf{tag->run, it->second.run->calls()};
  it->second.labels.push_back(label);
  it->second.run->Sent(request);
  return absl::OkStatus();
}

absl::Status LawMonitor::Received(int64_t request_label, const ir::Value& response) {
  if (violation_) return absl::OkStatus();
  auto c = call_of_label_.find(request_label);
  if (c == call_of_label_.end()) return absl::OkStatus();
  const CallOf call = c->second;
  call_of_label_.erase(c);
  auto it = runs_.find(call.run);
  if (it == runs_.end()) return absl::OkStatus();
  it->second.run->Answered(call.index, response);
  return Judge(call.run, it->second);
}

absl::Status LawMonitor::SetAside(int64_t run_id) {
  auto it = runs_.find(run_id);
  if (it != runs_.end()) {
    ++counts_[it->second.run->law().name].set_aside;
    Close(it);
  }
  set_aside_.insert(run_id);
  return absl::OkStatus();
}

void LawMonitor::Close(absl::flat_hash_map<int64_t, Open>::iterator it) {
  for (int64_t label : it->second.labels) call_of_label_.erase(label);
  runs_.erase(it);
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
      return SetAside(run_id);
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
  // A run that ended; a later call under its id is not evidence.
  set_aside_.insert(run_id);
  Close(runs_.find(run_id));
  return absl::OkStatus();
}

}  // namespace dualswarm::monitor
