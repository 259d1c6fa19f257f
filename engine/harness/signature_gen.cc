#include "engine/harness/signature_gen.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "engine/monitor/law_monitor.h"

namespace dualswarm::harness {

using ir::Value;

namespace {

// A handle as the library protocol writes it: {"$TYPE": N}. Sets *type.
bool ReadHandle(const Value& v, std::string* type) {
  if (!v.is_map() || v.as_map().size() != 1) return false;
  const auto& [key, id] = v.as_map()[0];
  if (key.size() < 2 || key[0] != '$' || !id.is_int()) return false;
  *type = key.substr(1);
  return true;
}

// {"$TYPE": hole} into the `ret` of response `label`; `id` is the fallback.
Value HandleReference(const std::string& type, int64_t label, const Value& id) {
  ir::JRef ref;
  ref.label = label;
  ref.path = {ir::JStep{false, "ret", 0}, ir::JStep{false, absl::StrCat("$", type), 0}};
  return Value::Map({{absl::StrCat("$", type), ir::MakeHole(ref, &id)}});
}

}  // namespace

SignatureGenerator::SignatureGenerator(std::shared_ptr<const lang::Spec> spec, lang::ConnectionNodes nodes,
                                       int max_depth)
    : spec_(std::move(spec)), interp_(spec_.get(), nodes), max_depth_(std::clamp(max_depth, 1, kMaxPoolDepth)) {
  // The spec's checks number these two sites after its own (checks.cc).
  op_site_ = spec_->ast.num_choice_sites - 2;
  law_site_ = op_site_ + 1;
}

bool SignatureGenerator::IsAbstract(const std::string& type) const { return lang::IsAbstractType(*spec_, type); }

void SignatureGenerator::Absorb(const std::vector<ir::LabeledMessage>& trace) {
  for (; absorbed_ < trace.size(); ++absorbed_) {
    const ir::LabeledMessage& m = trace[absorbed_];
    if (m.label % 2 != 0) continue;  // a request
    auto it = awaited_.find(m.label - 1);
    if (it == awaited_.end()) continue;
    const Awaited a = it->second;
    awaited_.erase(it);
    const Value* ret = m.msg.Find("ret");
    if (a.law_run >= 0) {
      if (active_ && active_->id == a.law_run) {
        active_->run->Answered(a.law_call, m.msg);
        if (a.law_call < active_->returned.size()) active_->returned[a.law_call] = m.msg;
        active_->waiting = false;
      }
      continue;
    }
    std::string type;
    if (a.result_type.empty() || ret == nullptr || !ReadHandle(*ret, &type) || type != a.result_type) continue;
    ++stats_.values_built;
    if (a.depth > max_depth_) continue;
    std::vector<PoolValue>& pool = pools_[type];
    PoolValue v{HandleReference(type, m.label, ret->as_map()[0].second), a.depth};
    // A full pool replaces a value of its most common depth (keeps depths).
    if (pool.size() >= kMaxPoolValues) {
      std::map<int, size_t> per_depth;
      for (const auto& p : pool) ++per_depth[p.depth];
      int common = std::max_element(per_depth.begin(), per_depth.end(), [](auto& x, auto& y) {
                     return x.second < y.second;
                   })->first;
      for (auto& p : pool)
        if (p.depth == common) {
          p = std::move(v);
          break;
        }
    } else {
      pool.push_back(std::move(v));
    }
    stats_.max_depth = std::max(stats_.max_depth, a.depth);
  }
}

std::optional<Value> SignatureGenerator::PickFromPool(const std::string& type, lang::GenContext* gen, int* depth) {
  auto it = pools_.find(type);
  if (it == pools_.end() || it->second.empty()) return std::nullopt;
  // A depth first, uniformly among those present, then a value of it.
  std::set<int> depths;
  for (const auto& p : it->second) depths.insert(p.depth);
  auto d = depths.begin();
  std::advance(d, gen->RandomInt(0, static_cast<int64_t>(depths.size()) - 1));
  std::vector<const PoolValue*> of_depth;
  for (const auto& p : it->second)
    if (p.depth == *d) of_depth.push_back(&p);
  const PoolValue* v = of_depth[static_cast<size_t>(gen->RandomInt(0, static_cast<int64_t>(of_depth.size()) - 1))];
  *depth = v->depth;
  return v->jexpr;
}

absl::StatusOr<std::optional<Value>> SignatureGenerator::Draw(const std::string& type, lang::GenContext* gen,
                                                              int* depth) {
  *depth = 0;
  if (IsAbstract(type)) return PickFromPool(type, gen, depth);
  for (const auto& g : spec_->ast.gens)
    if (g.name == type && g.role == lang::Role::kClient) {
      absl::StatusOr<Value> v = interp_.RunGen(type, spec_->initial_globals, gen);
      if (!v.ok()) return v.status();
      // A value, taken literally (a base type's gen makes no references).
      return std::optional<Value>(ir::QuoteLookalikes(*v, {}));
    }
  if (type == "int") return std::optional<Value>(Value::Int(gen->RandomInt(-4, 20)));
  if (type == "bool") return std::optional<Value>(Value::Bool(gen->RandomInt(0, 1) == 1));
  return std::optional<Value>(Value::String(gen->RandomWord(gen->RandomInt(0, 3))));  // string (the checks)
}

Value SignatureGenerator::ArgJExpr(const Value& concrete) const {
  std::string type;
  if (active_ && ReadHandle(concrete, &type)) {
    const std::vector<Value>& params = active_->run->args();
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i] == concrete) return active_->arg_jexprs[i];
  }
  return ir::QuoteLookalikes(concrete, {});
}

std::optional<Value> SignatureGenerator::NeededCall() {
  const std::optional<monitor::LawCall>& call = active_->run->needed();
  if (!call) return std::nullopt;
  std::vector<Value> args;
  for (const Value& a : call->args) {
    std::string type;
    Value j = ArgJExpr(a);
    // A handle an earlier call of this run returned: refer to its response.
    if (j == a && ReadHandle(a, &type))
      for (size_t k = 0; k < active_->call_labels.size(); ++k)
        if (const Value* ret = active_->returned[k].Find("ret"); ret != nullptr && *ret == a)
          j = HandleReference(type, active_->call_labels[k] + 1, a.as_map()[0].second);
    args.push_back(std::move(j));
  }
  Awaited w;
  w.law_run = active_->id;
  w.law_call = active_->run->calls();
  planned_ = w;
  return Value::Map({{"call", Value::String(call->op)},
                     {"args", Value::List(std::move(args))},
                     {"law", monitor::MakeLawTag(active_->run->law().name, active_->id, active_->arg_jexprs)}});
}

// Goes on with the law run under way: its next call, or nullopt when it
// ended (counted by the checker's law monitor, which judges the trace).
absl::StatusOr<std::optional<Value>> SignatureGenerator::ContinueLaw() {
  absl::StatusOr<lang::LawOutcome> out = active_->run->Evaluate(interp_);
  if (!out.ok()) return out.status();
  if (out->kind == lang::LawOutcome::Kind::kPending) {
    if (std::optional<Value> call = NeededCall()) return call;
  }
  active_.reset();
  return std::optional<Value>();
}

// Starts a run of a law on values drawn for its parameters; nullopt when a
// pool it needs is still empty or the run needs no call.
absl::StatusOr<std::optional<Value>> SignatureGenerator::StartLaw(const std::vector<ir::LabeledMessage>& trace,
                                                                  lang::GenContext* gen) {
  const auto& laws = spec_->ast.laws;
  std::vector<int64_t> weights(laws.size(), 1);
  std::vector<bool> excluded(laws.size(), false);
  const int pick = gen->ChooseAlternative(law_site_, weights, excluded);
  if (pick < 0) return std::optional<Value>();
  const lang::LawDecl& law = laws[static_cast<size_t>(pick)];
  ActiveRun run;
  run.id = next_run_++;
  std::vector<Value> concrete;
  for (const std::string& type : law.param_types) {
    int depth = 0;
    absl::StatusOr<std::optional<Value>> v = Draw(type, gen, &depth);
    if (!v.ok()) return v.status();
    if (!*v) return std::optional<Value>();
    absl::StatusOr<Value> c = ir::Instantiate(**v, trace);
    if (!c.ok()) return std::optional<Value>();
    run.arg_jexprs.push_back(**v);
    concrete.push_back(*std::move(c));
  }
  run.run = std::make_unique<monitor::LawRun>(spec_.get(), &law, std::move(concrete));
  active_ = std::move(run);
  ++stats_.law_runs;
  return ContinueLaw();
}

// A call that builds values: an op whose abstract arguments all have
// values in the pools, on arguments drawn for it.
absl::StatusOr<Value> SignatureGenerator::BuildingCall(lang::GenContext* gen) {
  const auto& ops = spec_->ast.ops;
  std::vector<int64_t> weights(ops.size(), 1);
  std::vector<bool> excluded(ops.size(), false);
  for (size_t i = 0; i < ops.size(); ++i)
    for (const std::string& type : ops[i].params)
      if (IsAbstract(type) && pools_[type].empty()) excluded[i] = true;
  const int pick = gen->ChooseAlternative(op_site_, weights, excluded);
  if (pick < 0)
    return absl::FailedPreconditionError(absl::StrCat(
        "spec '", spec_->name,
        "': no operation of the signature can be called: each takes an abstract value and none has been made "
        "yet (declare one that makes a value from base values, e.g. `op empty() -> set;`)"));
  const lang::OpDecl& op = ops[static_cast<size_t>(pick)];
  std::vector<Value> args;
  int depth = 0;
  for (const std::string& type : op.params) {
    int d = 0;
    absl::StatusOr<std::optional<Value>> v = Draw(type, gen, &d);
    if (!v.ok()) return v.status();
    if (!*v) return absl::InternalError("an abstract argument without a value (its pool was checked)");
    args.push_back(**v);
    depth = std::max(depth, d);
  }
  Awaited w;
  w.result_type = IsAbstract(op.result) ? op.result : "";
  w.depth = depth + 1;
  planned_ = w;
  ++stats_.calls;
  return Value::Map({{"call", Value::String(op.name)}, {"args", Value::List(std::move(args))}});
}

absl::StatusOr<Value> SignatureGenerator::Next(const std::vector<ir::LabeledMessage>& trace, lang::GenContext* gen) {
  Absorb(trace);
  planned_.reset();
  if (active_ && !active_->waiting) {
    absl::StatusOr<std::optional<Value>> call = ContinueLaw();
    if (!call.ok()) return call.status();
    if (*call) return **call;
  }
  // Half the calls go to laws, once there are laws and nothing is waiting.
  if (!active_ && !spec_->ast.laws.empty() && gen->RandomInt(0, 1) == 1) {
    absl::StatusOr<std::optional<Value>> call = StartLaw(trace, gen);
    if (!call.ok()) return call.status();
    if (*call) return **call;
  }
  return BuildingCall(gen);
}

void SignatureGenerator::Sent(int64_t label, const Value& msg) {
  if (!planned_) return;
  const Awaited w = *planned_;
  planned_.reset();
  if (w.law_run >= 0) {
    if (!active_ || active_->id != w.law_run) return;
    active_->run->Sent(msg);
    active_->call_labels.push_back(label);
    active_->returned.emplace_back();
    active_->waiting = true;
  }
  awaited_[label] = w;
}

void SignatureGenerator::Unanswered(const std::vector<int64_t>& labels) {
  for (int64_t label : labels) awaited_.erase(label);
  if (active_ && active_->waiting && !active_->call_labels.empty() &&
      std::find(labels.begin(), labels.end(), active_->call_labels.back()) != labels.end())
    active_.reset();
}

SignatureStats SignatureGenerator::stats() const {
  SignatureStats s = stats_;
  s.depth_limit = max_depth_;
  for (const auto& [type, pool] : pools_) s.pool_sizes[type] = pool.size();
  return s;
}

}  // namespace dualswarm::harness
