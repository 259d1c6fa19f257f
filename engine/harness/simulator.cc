#include "engine/harness/simulator.h"

#include <deque>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/ir/json.h"
#include "engine/lang/interp.h"

namespace dualswarm::harness {
namespace {

using check::Observation;
using ir::Value;

class RandomOracle : public lang::Oracle {
 public:
  RandomOracle(Rng* rng, const SimOptions* opts) : rng_(rng), opts_(opts) {}
  int Choose(int n, lang::Loc) override {
    return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(*rng_));
  }
  Value Fresh(sym::Sort sort, lang::Loc) override {
    switch (sort) {
      case sym::Sort::kBool: return Value::Bool(Choose(2, {}) == 0);
      case sym::Sort::kInt: return Value::Int(Choose(10, {}));
      case sym::Sort::kString:
        return Value::String(opts_->fresh_strings[static_cast<size_t>(
            Choose(static_cast<int>(opts_->fresh_strings.size()), {}))]);
    }
    return Value::Null();
  }
  // Concrete runs never meet symbolic conditions.
  bool Decide(const sym::TermRef&, lang::Loc) override { return false; }
  bool Assume(const sym::TermRef&, lang::Loc) override { return false; }
  bool Possible(const sym::TermRef&) override { return false; }

 private:
  Rng* rng_;
  const SimOptions* opts_;
};

// What a client would see of a spec message: fields set to `none` are
// absent, `some(v)` is v.
Value Concretize(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kOption: return v.has_value() ? Concretize(v.inner()) : Value::Null();
    case Value::Kind::kMap: {
      ir::MapEntries e;
      for (const auto& [k, x] : v.as_map())
        if (!(x.is_option() && !x.has_value())) e.emplace_back(k, Concretize(x));
      return Value::Map(std::move(e));
    }
    case Value::Kind::kList: {
      std::vector<Value> items;
      for (const auto& x : v.as_list()) items.push_back(Concretize(x));
      return Value::List(std::move(items));
    }
    default: return v;
  }
}

struct Pending {
  int64_t label;
  Value msg;
};

}  // namespace

absl::StatusOr<std::vector<Observation>> Simulate(const lang::Spec& spec,
                                                  const RequestFn& next_request,
                                                  const SimOptions& opts) {
  if (opts.connections <= 0 || opts.max_in_flight <= 0)
    return absl::InvalidArgumentError("connections and max_in_flight must be positive");
  Rng rng(opts.seed);
  RandomOracle oracle(&rng, &opts);
  lang::Interpreter interp(&spec);
  std::vector<Value> globals = spec.initial_globals;
  size_t n = static_cast<size_t>(opts.connections);
  std::vector<std::deque<Pending>> to_server(n);     // sent, not yet taken by the server
  std::vector<std::deque<Pending>> to_client(n);     // responses in flight
  std::vector<int> in_flight(n, 0);
  std::vector<Observation> trace;
  int sent = 0;
  int64_t next_label = 1;
  int64_t t = 0;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  bool truncate = unit(rng) < opts.truncate_probability;
  size_t stop_at = truncate ? static_cast<size_t>(opts.requests) + (rng() % (static_cast<uint64_t>(opts.requests) + 1))
                            : SIZE_MAX;
  while (trace.size() < stop_at) {
    // Possible actions: 0 = a client sends, 1 = the server steps, 2 = a response arrives.
    std::vector<std::pair<int, size_t>> actions;
    for (size_t c = 0; c < n; ++c) {
      if (sent < opts.requests && in_flight[c] < opts.max_in_flight) actions.push_back({0, c});
      if (!to_server[c].empty()) actions.push_back({1, c});
      if (!to_client[c].empty()) actions.push_back({2, c});
    }
    if (actions.empty()) break;
    auto [kind, c] = actions[rng() % actions.size()];
    ++t;
    if (kind == 0) {
      Observation o;
      o.kind = Observation::Kind::kSent;
      o.label = next_label;
      next_label += 2;
      o.conn = static_cast<int64_t>(c);
      o.msg = next_request(rng);
      o.t = t;
      to_server[c].push_back({o.label, o.msg});
      ++in_flight[c];
      ++sent;
      trace.push_back(std::move(o));
    } else if (kind == 1) {
      Pending p = std::move(to_server[c].front());
      to_server[c].pop_front();
      lang::StepOutput out;
      // An `assume` may kill the random path; draw again (rejection sampling).
      for (int attempt = 0; attempt < 1000; ++attempt) {
        absl::Status s = interp.RunHandler(globals, p.msg, Value::Int(static_cast<int64_t>(c)), &oracle, &out);
        if (!s.ok()) return s;
        if (!out.killed) break;
      }
      if (out.killed)
        return absl::FailedPreconditionError(absl::StrCat(
            "the spec's `assume` killed 1000 random paths in a row for request ", ir::ToJson(p.msg),
            "; the simulator needs specs whose server usually has a next step"));
      int responses = 0;
      for (auto& send : out.sends) {
        if (!send.conn.is_int() || send.conn.as_int() != static_cast<int64_t>(c))
          return absl::FailedPreconditionError(
              "the simulator supports specs that answer on the request's own connection only");
        ++responses;
        to_client[c].push_back({p.label + 1, Concretize(send.msg)});
      }
      if (responses != 1)
        return absl::FailedPreconditionError(absl::StrCat(
            "the simulator needs exactly one response per request; the spec sent ", responses));
      globals = std::move(out.globals);
    } else {
      Pending p = std::move(to_client[c].front());
      to_client[c].pop_front();
      Observation o;
      o.kind = Observation::Kind::kReceived;
      o.label = p.label;
      o.conn = static_cast<int64_t>(c);
      o.msg = std::move(p.msg);
      o.t = t;
      --in_flight[c];
      trace.push_back(std::move(o));
    }
  }
  return trace;
}

}  // namespace dualswarm::harness
