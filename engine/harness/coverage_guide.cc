#include "engine/harness/coverage_guide.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"

#include "engine/check/path_oracle.h"

namespace dualswarm::harness {

namespace {

// Where a prediction's own `fresh` values are numbered from: far above the
// ids the checker gives the variables of the model state (each step's, or
// counted up from 0), so that the two never meet.
constexpr int64_t kPredictionVarBase = int64_t{1} << 50;

}  // namespace

CoverageGuide::CoverageGuide(std::shared_ptr<const lang::Spec> spec, lang::ConnectionNodes nodes,
                             const std::atomic<bool>* cancel)
    : spec_(std::move(spec)),
      cancel_(cancel),
      interp_(spec_.get(), nodes),
      solver_(500),
      reached_(spec_->branches.size(), false) {}

std::vector<int32_t> CoverageGuide::Predict(const std::vector<ir::Value>& globals, const ir::Value& request) {
  const std::vector<sym::TermRef> no_constraints;
  check::PathOracle oracle(&solver_, &no_constraints, kPredictionVarBase, [this] {
    return cancel_ != nullptr && cancel_->load() ? absl::CancelledError("interrupted") : absl::OkStatus();
  });
  lang::StepOutput out;
  std::vector<int32_t> taken, all;
  out.branches = &taken;
  int paths = 0;
  do {
    oracle.Restart();
    const absl::Status st = interp_.RunHandler(globals, request, ir::Value::Int(0), &oracle, &out);
    // A killed path never happened; a path that fails still shows where
    // it went until then.
    if (st.ok() && (out.killed || oracle.dead())) continue;
    all.insert(all.end(), taken.begin(), taken.end());
    if (!st.ok()) break;
  } while (++paths < kMaxPaths && oracle.NextPath());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

namespace {

// The variables of `inputs` that `constraints` mention, or that a `domain`
// constraint ties to one they mention (transitively).
std::vector<sym::TermRef> ConstrainedInputs(const std::vector<sym::TermRef>& constraints,
                                            const std::vector<sym::TermRef>& domain,
                                            const std::vector<sym::TermRef>& inputs) {
  absl::flat_hash_set<int64_t> reached;
  std::vector<sym::TermRef> vars;
  for (const auto& c : constraints) sym::CollectVars(c, &vars);
  for (const auto& v : vars) reached.insert(v->ival);
  std::vector<std::vector<sym::TermRef>> domain_vars(domain.size());
  for (size_t i = 0; i < domain.size(); ++i) sym::CollectVars(domain[i], &domain_vars[i]);
  bool grew = true;
  while (grew) {
    grew = false;
    for (const auto& dv : domain_vars) {
      bool shares = false;
      for (const auto& v : dv) shares |= reached.contains(v->ival);
      if (!shares) continue;
      for (const auto& v : dv) grew |= reached.insert(v->ival).second;
    }
  }
  std::vector<sym::TermRef> out;
  for (const auto& in : inputs)
    if (reached.contains(in->ival)) out.push_back(in);
  return out;
}

}  // namespace

std::optional<sym::Bindings> CoverageGuide::SolveForNewBranches(const std::vector<ir::Value>& globals,
                                                                const ir::Value& request,
                                                                const std::vector<sym::TermRef>& inputs,
                                                                const std::vector<sym::TermRef>& domain,
                                                                const sym::Bindings& draws) {
  const uint64_t z3_calls_before = solver_.stats().z3_calls;
  check::PathOracle oracle(&solver_, &domain, kPredictionVarBase, [this] {
    return cancel_ != nullptr && cancel_->load() ? absl::CancelledError("interrupted") : absl::OkStatus();
  });
  lang::StepOutput out;
  std::vector<int32_t> taken;
  out.branches = &taken;
  size_t best_novelty = 0;
  std::vector<sym::TermRef> best_path;
  int paths = 0;
  do {
    oracle.Restart();
    const absl::Status st = interp_.RunHandler(globals, request, ir::Value::Int(0), &oracle, &out);
    if (!st.ok()) break;
    if (out.killed || oracle.dead()) continue;
    std::sort(taken.begin(), taken.end());
    taken.erase(std::unique(taken.begin(), taken.end()), taken.end());
    const size_t novelty = Novelty(taken);
    if (novelty > best_novelty) {
      best_novelty = novelty;
      best_path = oracle.added();
    }
  } while (++paths < kMaxPaths && solver_.stats().z3_calls - z3_calls_before < kMaxConcolicZ3Calls &&
           oracle.NextPath());
  if (best_novelty == 0) return std::nullopt;
  std::vector<sym::TermRef> query = domain;
  query.insert(query.end(), best_path.begin(), best_path.end());
  sym::Bindings values = draws;
  const std::vector<sym::TermRef> wanted = ConstrainedInputs(best_path, domain, inputs);
  if (!wanted.empty()) {
    std::optional<sym::Bindings> solved = solver_.Model(query, wanted);
    if (!solved) return std::nullopt;
    for (auto& [var, value] : *solved) values[var] = std::move(value);
  }
  // A draw the path left alone may still break an arm the gen block took
  // (`if n > 4` went `else` concolically, and n was drawn 7): then every
  // input is Z3's.
  for (const auto& c : domain) {
    const sym::TermRef holds = sym::Substitute(c, values);
    if (holds->op != sym::TermOp::kConstBool || holds->ival == 0) return solver_.Model(query, inputs);
  }
  return values;
}

size_t CoverageGuide::Novelty(const std::vector<int32_t>& branches) const {
  size_t n = 0;
  for (const int32_t id : branches)
    if (id >= 0 && static_cast<size_t>(id) < reached_.size() && !reached_[static_cast<size_t>(id)]) ++n;
  return n;
}

void CoverageGuide::Reach(const std::vector<int32_t>& branches) {
  for (const int32_t id : branches)
    if (id >= 0 && static_cast<size_t>(id) < reached_.size()) reached_[static_cast<size_t>(id)] = true;
}

}  // namespace dualswarm::harness
