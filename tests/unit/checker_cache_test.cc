// The checker on specs/http_cache.dspec: soundness (every trace the spec
// itself produces as the server, between simulated clients and a simulated
// origin that run the spec's own gens, is accepted, whatever the simulated
// cache chose: store or not, hit or forward, conditional or not) and
// sensitivity (a hit that should have been a miss, a changed body or a
// missing Age is rejected). With DS_DUMP_TRACES=DIR set, each simulated
// trace is also written to DIR/cache-SEED.jsonl, to study one with
// `dualswarm check`.
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/check/checker.h"
#include "engine/check/observation.h"
#include "engine/harness/intermediary_simulator.h"
#include "engine/lang/interp.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/shipped_spec.h"

namespace dualswarm {
namespace {

using check::Observation;
using check::Side;
using ir::Value;

// The spec's gens on a seeded generator (they read no model state).
class RngGen : public lang::GenContext {
 public:
  explicit RngGen(harness::Rng* rng) : rng_(rng) {}
  int ChooseAlternative(int, const std::vector<int64_t>& weights, const std::vector<bool>&) override {
    int64_t total = 0;
    for (int64_t w : weights) total += w;
    int64_t x = static_cast<int64_t>((*rng_)() % static_cast<uint64_t>(total));
    for (size_t k = 0; k < weights.size(); ++k)
      if ((x -= weights[k]) < 0) return static_cast<int>(k);
    return 0;
  }
  int64_t RandomInt(int64_t lo, int64_t hi) override {
    return lo + static_cast<int64_t>((*rng_)() % static_cast<uint64_t>(hi - lo + 1));
  }
  std::string RandomWord(int64_t length) override {
    std::string w;
    for (int64_t k = 0; k < length; ++k) w += static_cast<char>('a' + (*rng_)() % 3);  // few letters: collisions
    return w;
  }
  std::string RandomEtag() override { return absl::StrCat("\"", RandomWord(2), "\""); }
  std::optional<Value> Observed(const std::string&) override { return std::nullopt; }

 private:
  harness::Rng* rng_;
};

std::shared_ptr<const lang::Spec> CacheSpec() { return Shipped("http_cache.dspec"); }

std::vector<Observation> Simulated(uint64_t seed, int requests) {
  auto spec = CacheSpec();
  lang::Interpreter interp(spec.get());
  harness::IntermediarySimOptions so;
  so.seed = seed;
  so.requests = requests;
  so.connections = 1 + static_cast<int>(seed % 4);
  so.max_in_flight = 1 + static_cast<int>(seed / 4 % 2);
  so.origin_connections = 1 + static_cast<int>(seed / 8 % 3);
  so.fresh_int_bound = 600;  // the 5xx an origin failure becomes
  const harness::RequestFn request = [&](harness::Rng& rng) {
    RngGen gen(&rng);
    auto v = interp.RunGen("request", spec->initial_globals, &gen);
    EXPECT_TRUE(v.ok()) << v.status();
    return v.ok() ? *v : Value::Null();
  };
  const harness::AnswerFn answer = [&](harness::Rng& rng, const Value& q) {
    RngGen gen(&rng);
    auto v = interp.RunGen("answer", spec->initial_globals, &gen, &q);
    EXPECT_TRUE(v.ok()) << v.status();
    return v.ok() ? *v : Value::Null();
  };
  auto trace = harness::SimulateIntermediary(*spec, request, answer, so);
  EXPECT_TRUE(trace.ok()) << trace.status();
  if (const char* dir = std::getenv("DS_DUMP_TRACES"); dir != nullptr && trace.ok()) {
    std::ofstream out(absl::StrCat(dir, "/cache-", seed, ".jsonl"));
    for (const Observation& o : *trace) out << check::ObservationToJson(o) << "\n";
  }
  return trace.ok() ? *trace : std::vector<Observation>{};
}

check::Verdict Check(const std::vector<Observation>& trace, bool use_step_cache = true) {
  check::CheckerOptions co;
  co.use_step_cache = use_step_cache;
  co.verify_memo_keys = true;
  co.max_steps = 2'000'000;
  auto v = check::CheckTrace(CacheSpec(), trace, co);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : check::Verdict{check::Verdict::Kind::kSpecError, v.status().ToString()};
}

// Whether a client got a response without an origin request between its
// request and it: the trace has a hit (a response from the store).
bool HasHit(const std::vector<Observation>& t) {
  for (const Observation& o : t)
    if (o.side == Side::kClient && o.kind == Observation::Kind::kReceived && o.msg.Find("headers") != nullptr &&
        o.msg.Find("headers")->Find("age") != nullptr)
      return true;
  return false;
}

TEST(CheckerCache, EverySimulatedTraceIsAccepted) {
  int hits = 0, conditionals = 0, not_modified = 0;
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    const std::vector<Observation> t = Simulated(seed, 30);
    hits += HasHit(t);
    for (const Observation& o : t) {
      const Value* h = o.msg.Find("headers");
      conditionals += o.side == Side::kOrigin && h != nullptr && h->Find("if-none-match") != nullptr;
      const Value* status = o.msg.Find("status");
      not_modified += o.side == Side::kOrigin && status != nullptr && status->is_int() && status->as_int() == 304;
    }
    const check::Verdict v = Check(t);
    ASSERT_EQ(v.kind, check::Verdict::Kind::kAccept) << "seed " << seed << ": " << check::FormatVerdict(v);
  }
  // The traces exercise the cache's choices.
  EXPECT_GT(hits, 60);
  EXPECT_GT(conditionals, 60);
  EXPECT_GT(not_modified, 30);
}

// A copy of t with `edit` applied to the k-th client response that has a
// header `header` (or any, for "").
template <typename Edit>
std::vector<Observation> EditedResponse(std::vector<Observation> t, const std::string& header, size_t k, Edit edit) {
  for (Observation& o : t) {
    if (o.side != Side::kClient || o.kind != Observation::Kind::kReceived) continue;
    const Value* h = o.msg.Find("headers");
    if (!header.empty() && (h == nullptr || h->Find(header) == nullptr)) continue;
    if (k-- == 0) {
      o.msg = edit(o.msg);
      break;
    }
  }
  return t;
}

TEST(CheckerCache, AHitWithoutAgeOrWithAnotherBodyIsRejected) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 40 && checked < 10; ++seed) {
    const std::vector<Observation> t = Simulated(seed, 30);
    if (!HasHit(t)) continue;
    ++checked;
    auto no_age =
        EditedResponse(t, "age", 0, [](Value m) { return m.Set("headers", m.Find("headers")->Remove("age")); });
    EXPECT_EQ(Check(no_age).kind, check::Verdict::Kind::kReject) << "seed " << seed;
    auto other_body = EditedResponse(t, "age", 0, [](Value m) {
      return m.Set("body", Value::String(m.Find("body")->as_string() + "nothing-has-this"));
    });
    EXPECT_EQ(Check(other_body).kind, check::Verdict::Kind::kReject) << "seed " << seed;
  }
  EXPECT_EQ(checked, 10);
}

// A hit's Age must be delta-seconds (RFC 9111 §5.1) no younger than the
// origin's Age (§4.2.3): one that is not a number, and one younger than the
// origin said, are rejected.
TEST(CheckerCache, AHitsAgeMustBeANumberNoYoungerThanTheOrigins) {
  int not_numbers = 0, younger = 0;
  for (uint64_t seed = 1; seed <= 120 && (not_numbers < 5 || younger < 3); ++seed) {
    const std::vector<Observation> t = Simulated(seed, 30);
    if (!HasHit(t)) continue;
    if (not_numbers < 5) {
      ++not_numbers;
      auto not_a_number = EditedResponse(
          t, "age", 0, [](Value m) { return m.Set("headers", m.Find("headers")->Set("age", Value::String("3s"))); });
      EXPECT_EQ(Check(not_a_number).kind, check::Verdict::Kind::kReject) << "seed " << seed;
    }
    // A hit on an origin answer that carried an Age (and that no 304
    // validated since: validated, its age starts again), served with Age 0
    // (the simulator's hits say 0 or 5000).
    auto identity = [](const Value& m) {
      const Value* h = m.Find("headers");
      auto field = [&](const char* name) {
        const Value* v = h == nullptr ? nullptr : h->Find(name);
        return v != nullptr && v->is_string() ? v->as_string() : std::string("-");
      };
      const Value* body = m.Find("body");
      return absl::StrCat(field("etag"), " ", field("x-e2e-b"), " ", body != nullptr ? body->ToString() : "");
    };
    std::set<std::string> aged, validated_tags;
    for (const Observation& o : t) {
      if (o.side != Side::kOrigin || o.kind != Observation::Kind::kSent || o.msg.Find("headers") == nullptr) continue;
      const Value* status = o.msg.Find("status");
      const Value* etag = o.msg.Find("headers")->Find("etag");
      if (status != nullptr && status->is_int() && status->as_int() == 304 && etag != nullptr)
        validated_tags.insert(etag->ToString());
      if (o.msg.Find("headers")->Find("age") != nullptr) aged.insert(identity(o.msg));
    }
    for (size_t k = 0; younger < 3; ++k) {
      bool found = false, changed = false;
      auto zero = EditedResponse(t, "age", k, [&](Value m) {
        found = true;
        const Value* etag = m.Find("headers")->Find("etag");
        if (aged.count(identity(m)) == 0 || (etag != nullptr && validated_tags.count(etag->ToString()) > 0)) return m;
        changed = true;
        return m.Set("headers", m.Find("headers")->Set("age", Value::String("0")));
      });
      if (!found) break;
      if (!changed) continue;
      ++younger;
      EXPECT_EQ(Check(zero).kind, check::Verdict::Kind::kReject) << "seed " << seed << ", hit " << k;
      break;
    }
  }
  EXPECT_EQ(not_numbers, 5);
  EXPECT_EQ(younger, 3);
}

// The step cache serves steps from explanations with constraints (a hit's
// Age waits for its response) when their state is concrete: verdicts with
// it equal those without it, on accepted and on edited traces.
TEST(CheckerCache, TheStepCacheChangesNoVerdict) {
  int compared = 0, rejected = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const std::vector<Observation> t = Simulated(seed, 16);
    std::vector<std::vector<Observation>> traces = {t};
    if (HasHit(t)) {
      traces.push_back(EditedResponse(t, "age", 0, [](Value m) {
        return m.Set("body", Value::String(m.Find("body")->as_string() + "nothing-has-this"));
      }));
    }
    for (const auto& trace : traces) {
      const check::Verdict::Kind with = Check(trace).kind;
      ASSERT_EQ(with, Check(trace, /*use_step_cache=*/false).kind) << "seed " << seed;
      rejected += with == check::Verdict::Kind::kReject;
      ++compared;
    }
  }
  EXPECT_GT(compared, 45);
  EXPECT_GT(rejected, 8);
}

}  // namespace
}  // namespace dualswarm
