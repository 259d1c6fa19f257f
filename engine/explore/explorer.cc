#include "engine/explore/explorer.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "engine/check/constraints.h"
#include "engine/check/explanation.h"
#include "engine/check/path_oracle.h"
#include "engine/ir/json.h"
#include "engine/lang/interp.h"
#include "engine/monitor/property_monitor.h"
#include "engine/sym/solver.h"
#include "engine/sym/term.h"

namespace dualswarm::explore {
namespace {

using ir::Value;
using Clock = std::chrono::steady_clock;

// A model state: the spec's globals and what its path constraints say of
// the `fresh` values in them, with the state of each property's monitor
// (the product of the spec and the monitors' automata).
struct State {
  std::vector<Value> globals;
  std::vector<sym::TermRef> pc;
  int64_t next_fresh = 0;
  monitor::PropertyMonitors monitors;
};

// Variables get canonical ids from here on in keys (above any a state
// numbers: those count up from 0, one per `fresh` taken).
constexpr int64_t kCanonicalVarBase = int64_t{1} << 40;

// The canonical text states are compared by: every value and constraint
// printed (the constraints sorted), variables renamed in the order they
// first occur. Two states
// equal up to the names of their variables behave alike from there on (a
// `fresh` value's name says nothing about it), so they are one state.
std::string KeyOf(const State& s) {
  std::vector<sym::TermRef> vars;
  for (const Value& g : s.globals) ir::CollectValueVars(g, &vars);
  for (const sym::TermRef& c : s.pc) sym::CollectVars(c, &vars);
  sym::Bindings canonical;
  int64_t next = kCanonicalVarBase;
  for (const sym::TermRef& v : vars)
    if (canonical.find(v->ival) == canonical.end()) canonical.emplace(v->ival, sym::MkVar(v->sort, next++, v->sval));
  std::string key;
  for (const Value& g : s.globals)
    absl::StrAppend(&key, (canonical.empty() ? g : ir::SubstituteValue(g, canonical)).ToString(), "\n");
  // The constraints are a conjunction: their order does not matter.
  std::vector<std::string> constraints;
  for (const sym::TermRef& c : s.pc)
    constraints.push_back(sym::TermToString(canonical.empty() ? c : sym::Substitute(c, canonical)));
  std::sort(constraints.begin(), constraints.end());
  for (const std::string& c : constraints) absl::StrAppend(&key, "&", c, "\n");
  if (!s.monitors.empty()) absl::StrAppend(&key, "|", s.monitors.Describe());
  return key;
}

// What a client would observe of a message the spec sends: a field whose
// value is `none` is absent and `some(v)` is v (check/match.h reads spec
// messages so), so a property's conditions read the spec's responses as
// they read a server's.
Value ObservedForm(const Value& v) {
  if (v.is_option()) return v.has_value() ? ObservedForm(v.inner()) : Value::Null();
  if (v.is_list()) {
    std::vector<Value> items;
    for (const Value& x : v.as_list()) items.push_back(ObservedForm(x));
    return Value::List(std::move(items));
  }
  if (!v.is_map()) return v;
  ir::MapEntries fields;
  for (const auto& [k, x] : v.as_map())
    if (!x.is_option() || x.has_value()) fields.emplace_back(k, ObservedForm(x));
  return Value::Map(std::move(fields));
}

class Explorer {
 public:
  Explorer(std::shared_ptr<const lang::Spec> spec, const ExploreOptions& o)
      : spec_(std::move(spec)), o_(o), interp_(spec_.get()), solver_(o.solver_timeout_ms), start_(Clock::now()) {}

  ExploreResult Run() {
    State init{spec_->initial_globals, {}, 0, monitor::PropertyMonitors(spec_.get())};
    const std::string key = KeyOf(init);
    visited_.emplace(key, 0);
    r_.states = 1;
    std::vector<Value> path;
    Visit(init, std::hash<std::string>()(key), 0, &path);
    r_.seconds = Elapsed();
    std::sort(r_.violations.begin(), r_.violations.end(),
              [](const Violation& a, const Violation& b) { return a.requests.size() < b.requests.size(); });
    return std::move(r_);
  }

 private:
  double Elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // Whether a bound stops the exploration (and says which, once).
  bool Stopped() {
    if (!r_.stopped_by.empty()) return true;
    if (o_.cancel != nullptr && o_.cancel->load())
      r_.stopped_by = "interrupted";
    else if (o_.max_seconds > 0 && Elapsed() > o_.max_seconds)
      r_.stopped_by = absl::StrCat("time bound ", o_.max_seconds, " s");
    else if (r_.states > o_.max_states)
      r_.stopped_by = absl::StrCat("state bound ", o_.max_states);
    else if (o_.stop_at_first && !r_.violations.empty())
      r_.stopped_by = "first violation";
    return !r_.stopped_by.empty();
  }

  void Report(Violation::Kind kind, std::string message, const std::vector<Value>& path) {
    if (r_.seconds_to_first_violation < 0) r_.seconds_to_first_violation = Elapsed();
    auto [it, inserted] = violation_index_.try_emplace(message, r_.violations.size());
    if (inserted) {
      if (r_.violations.size() >= o_.max_violations) return;
      r_.violations.push_back(Violation{kind, std::move(message), path});
    } else if (it->second < r_.violations.size() && path.size() < r_.violations[it->second].requests.size()) {
      r_.violations[it->second].requests = path;
    }
  }

  // `key_hash`: the hash of the state's key (KeyOf).
  void Order(uint64_t key_hash, int depth, std::vector<Value>* requests) const {
    switch (o_.order) {
      case ActionOrder::kFirst:
        return;
      case ActionOrder::kLast:
        std::reverse(requests->begin(), requests->end());
        return;
      case ActionOrder::kRandom: {
        // Drawn from the seed and the state, never from a running
        // generator: the order does not depend on what was explored first.
        std::mt19937_64 rng(o_.seed * 0x9e3779b97f4a7c15ull ^ key_hash ^ static_cast<uint64_t>(depth));
        std::shuffle(requests->begin(), requests->end(), rng);
        return;
      }
    }
  }

  void Visit(const State& s, uint64_t key_hash, int depth, std::vector<Value>* path) {
    r_.depth_reached = std::max(r_.depth_reached, depth);
    if (depth >= o_.max_depth || Stopped()) return;
    bool cut = false;
    absl::StatusOr<std::vector<Value>> requests = EnumerateRequests(interp_, o_.gen, s.globals, o_.alphabet, &cut);
    r_.states_with_requests_cut += cut;
    if (!requests.ok()) {
      Report(Violation::Kind::kSpecError, std::string(requests.status().message()), *path);
      return;
    }
    Order(key_hash, depth, &*requests);
    for (const Value& request : *requests) {
      if (Stopped()) return;
      path->push_back(request);
      Take(s, request, depth, path);
      path->pop_back();
    }
  }

  // Handles `request` in `s` along every path; explores each state reached.
  void Take(const State& s, const Value& request, int depth, std::vector<Value>* path) {
    check::PathOracle oracle(&solver_, &s.pc, s.next_fresh,
                             [this] { return Stopped() ? absl::CancelledError(r_.stopped_by) : absl::OkStatus(); });
    lang::StepOutput out;
    int feasible = 0;
    do {
      oracle.Restart();
      ++r_.handler_runs;
      absl::Status st = interp_.RunHandler(s.globals, request, Value::Int(0), &oracle, &out);
      if (absl::IsCancelled(st)) return;
      if (!st.ok()) {
        Report(Violation::Kind::kSpecError, std::string(st.message()), *path);
        return;
      }
      if (out.killed || oracle.dead()) continue;
      // The path's constraints as the checker adds them (variables bound to
      // constants substituted), and those about values the state can no
      // longer reach dropped: states that differ only there are one.
      check::Explanation e;
      e.globals = std::make_shared<const std::vector<Value>>(std::move(out.globals));
      e.pc = s.pc;
      std::string why;
      if (!check::Constrain(&solver_, &e, oracle.added(), &why)) continue;  // the path is infeasible
      check::DropUnreachableConstraints(&e);
      ++feasible;
      ++r_.transitions;
      State child{*e.globals, std::move(e.pc), oracle.next_fresh(), s.monitors};
      if (!StepMonitors(request, out.sends, &child.monitors, *path)) continue;  // violated: reported
      std::string key = KeyOf(child);
      const uint64_t key_hash = std::hash<std::string>()(key);
      auto [it, inserted] = visited_.try_emplace(std::move(key), depth + 1);
      if (inserted) {
        ++r_.states;
      } else if (depth + 1 < it->second) {
        it->second = depth + 1;  // reached sooner: what lies below it may now be within the bound
      } else {
        continue;
      }
      Visit(child, key_hash, depth + 1, path);
      if (Stopped()) return;
    } while (oracle.NextPath());
    if (feasible == 0)
      Report(Violation::Kind::kDeadlock,
             absl::StrCat("no path of `on recv` accepts ", ir::ToJson(request), ": the spec can answer nothing to it"),
             *path);
  }

  // Steps the monitors on the request and then each response the path
  // sent it; false when a property is violated (reported) or a condition
  // failed (a spec error, reported).
  bool StepMonitors(const Value& request, const std::vector<lang::SendRecord>& sends,
                    monitor::PropertyMonitors* monitors, const std::vector<Value>& path) {
    if (monitors->empty()) return true;
    const size_t unknown_before = monitors->unknown();
    std::vector<monitor::MonitorEvent> events = {{request, Value::None(), 0}};
    for (const lang::SendRecord& send : sends)
      if (!send.to_origin) events.push_back({request, ObservedForm(send.msg), 0});
    for (const monitor::MonitorEvent& e : events) {
      if (absl::Status st = monitors->Step(e); !st.ok()) {
        Report(Violation::Kind::kSpecError, std::string(st.message()), path);
        return false;
      }
      if (const monitor::PropertyMonitor* m = monitors->violated()) {
        const lang::PropertyDecl& p = m->decl();
        Report(Violation::Kind::kProperty,
               absl::StrCat("property '", p.name, "' (", lang::FormatLoc(spec_->file, p.loc), ") is violated",
                            m->deadline_missed() ? ": an `eventually within` window closed" : ""),
               path);
        return false;
      }
    }
    r_.monitors_unknown += monitors->unknown() - unknown_before;
    return true;
  }

  std::shared_ptr<const lang::Spec> spec_;
  const ExploreOptions& o_;
  lang::Interpreter interp_;
  sym::Solver solver_;
  Clock::time_point start_;
  absl::flat_hash_map<std::string, int> visited_;  // state key -> smallest depth reached at
  absl::flat_hash_map<std::string, size_t> violation_index_;
  ExploreResult r_;
};

}  // namespace

const char* ActionOrderName(ActionOrder o) {
  switch (o) {
    case ActionOrder::kFirst:
      return "first";
    case ActionOrder::kLast:
      return "last";
    case ActionOrder::kRandom:
      return "random";
  }
  return "?";
}

absl::StatusOr<ActionOrder> ParseActionOrder(const std::string& name) {
  for (ActionOrder o : {ActionOrder::kFirst, ActionOrder::kLast, ActionOrder::kRandom})
    if (name == ActionOrderName(o)) return o;
  return absl::InvalidArgumentError(absl::StrCat("unknown order \"", name, "\" (known: first, last, random)"));
}

const char* ViolationKindName(Violation::Kind k) {
  switch (k) {
    case Violation::Kind::kSpecError:
      return "spec-error";
    case Violation::Kind::kDeadlock:
      return "deadlock";
    case Violation::Kind::kProperty:
      return "property";
  }
  return "?";
}

absl::StatusOr<ExploreResult> Explore(std::shared_ptr<const lang::Spec> spec, const ExploreOptions& options) {
  if (lang::Interpreter(spec.get()).HasOriginRole())
    return absl::FailedPreconditionError(
        "explore does not model an intermediary's origin side yet: the spec has an origin role");
  if (!lang::Interpreter(spec.get()).HasClientHandler())
    return absl::FailedPreconditionError(absl::StrCat(
        "spec '", spec->name,
        "' is a library interface without a model (no `on recv` handler): explore model-checks a spec's handler, "
        "so there is nothing to explore; test the library with its laws (docs/interfaces.md)"));
  bool has_gen = false;
  for (const auto& g : spec->ast.gens) has_gen |= g.name == options.gen && g.role == lang::Role::kClient;
  if (!has_gen)
    return absl::FailedPreconditionError(
        absl::StrCat("spec '", spec->name, "' has no client `gen ", options.gen, " { ... }` block to explore with"));
  if (options.max_depth < 0) return absl::InvalidArgumentError("the depth bound must not be negative");
  return Explorer(std::move(spec), options).Run();
}

std::string ExploreResultToJson(const ExploreResult& r) {
  std::string out =
      absl::StrCat("{\"states\":", r.states, ",\"transitions\":", r.transitions, ",\"handler_runs\":", r.handler_runs,
                   ",\"depth_reached\":", r.depth_reached, ",\"states_with_requests_cut\":", r.states_with_requests_cut,
                   ",\"monitors_unknown\":", r.monitors_unknown, ",\"complete\":", r.complete() ? "true" : "false",
                   ",\"stopped_by\":");
  ir::AppendJsonString(r.stopped_by, &out);
  absl::StrAppend(&out, ",\"seconds\":", r.seconds,
                  ",\"states_per_second\":", r.seconds > 0 ? static_cast<double>(r.states) / r.seconds : 0.0,
                  ",\"seconds_to_first_violation\":", r.seconds_to_first_violation, ",\"violations\":[");
  for (size_t i = 0; i < r.violations.size(); ++i) {
    const Violation& v = r.violations[i];
    absl::StrAppend(&out, i ? "," : "", "{\"kind\":\"", ViolationKindName(v.kind), "\",\"message\":");
    ir::AppendJsonString(v.message, &out);
    absl::StrAppend(&out, ",\"requests\":[");
    for (size_t k = 0; k < v.requests.size(); ++k) absl::StrAppend(&out, k ? "," : "", ir::ToJson(v.requests[k]));
    absl::StrAppend(&out, "]}");
  }
  absl::StrAppend(&out, "]}");
  return out;
}

}  // namespace dualswarm::explore
